import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApi, type TestApi } from "./helpers.js";

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi({ unreachableDatabase: true });
});
afterAll(async () => {
  await t?.close();
});

describe("GET /api/openapi.json", () => {
  it("serves an OpenAPI 3.1 document generated from the route table and the contracts schemas", async () => {
    const res = await fetch(`${t.url}/api/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as {
      openapi: string;
      paths: Record<
        string,
        Record<
          string,
          {
            security: unknown[];
            requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown>; required?: string[] } }> };
            responses: Record<string, unknown>;
          }
        >
      >;
    };
    expect(doc.openapi).toBe("3.1.0");
    for (const route of t.api.routes.routes) {
      const path = route.path.replace(/:(\w+)/g, "{$1}");
      expect(doc.paths[path]?.[route.method], `${route.method} ${path}`).toBeDefined();
    }
    expect(t.api.routes.routes.length).toBeGreaterThanOrEqual(30);
    const create = doc.paths["/api/tasks"]?.post;
    expect(create?.requestBody?.content["application/json"]?.schema.required).toEqual(["title"]);
    expect(Object.keys(create?.responses ?? {})).toContain("201");
    expect(doc.paths["/api/mcp-oauth/authorize"]?.get?.security).toEqual([{ sessionCookie: [] }]);
    expect(doc.paths["/api/tasks/{id}/messages"]?.post?.requestBody?.content).toHaveProperty("multipart/form-data");
    expect(doc.paths["/api/tasks"]?.get?.security).toEqual([{ bearerAuth: [] }]);
  });

  it("documents the MCP server: its access token scheme, its POST body and its metadata", async () => {
    const doc = (await (await fetch(`${t.url}/api/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { security: unknown[]; requestBody?: { content: Record<string, unknown> } }>>;
      components: { securitySchemes: Record<string, { type: string; bearerFormat?: string }> };
    };
    const mcp = doc.paths["/api/mcp"];
    expect(Object.keys(mcp ?? {}).sort()).toEqual(["delete", "get", "post"]);
    expect(mcp?.post?.security).toEqual([{ mcpAccessToken: [] }]);
    expect(mcp?.post?.requestBody?.content).toHaveProperty("application/json");
    expect(doc.components.securitySchemes.mcpAccessToken).toMatchObject({ type: "http", bearerFormat: "at+jwt" });
    expect(doc.paths["/.well-known/oauth-protected-resource/api/mcp"]?.get?.security).toEqual([]);
  });
});
