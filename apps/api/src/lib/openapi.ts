import { errorEnvelopeSchema, NEXT_CURSOR_HEADER } from "@app/contracts";
import { z } from "zod";
import type { RouteDoc, RouteRegistry } from "./registry.js";

type Json = Record<string, unknown>;

function schemaOf(schema: z.ZodType, io: "input" | "output"): Json {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as Json;
  return rest;
}

function parameters(schema: z.ZodType | undefined, where: "path" | "query"): Json[] {
  if (!schema) return [];
  const json = schemaOf(schema, "input");
  const properties = (json.properties ?? {}) as Record<string, Json>;
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries(properties).map(([name, s]) => ({ name, in: where, required: where === "path" || required.has(name), schema: s }));
}

const SECURITY: Record<RouteDoc["auth"], Json[]> = {
  bearer: [{ bearerAuth: [] }],
  cookie: [{ sessionCookie: [] }],
  none: [],
};

const envelope = (data: Json): Json => ({
  type: "object",
  required: ["ok", "data"],
  properties: { ok: { const: true }, data },
});

function successResponse(route: RouteDoc): Json {
  if (route.status === 204) return { description: "No content" };
  if (route.rawResponse === "redirect") return { description: "Redirect", headers: { location: { schema: { type: "string" } } } };
  if (route.rawResponse && route.rawResponse !== "application/json") {
    return { description: "Raw response (not wrapped)", content: { [route.rawResponse]: { schema: { type: "string" } } } };
  }
  const data = route.response ? schemaOf(route.response, "output") : {};
  const response: Json = {
    description: route.rawResponse ? "Raw JSON (not wrapped)" : "ok(data)",
    content: { "application/json": { schema: route.rawResponse ? data : envelope(data) } },
  };
  if (route.paginated) {
    response.headers = {
      [NEXT_CURSOR_HEADER]: { description: "Opaque cursor of the next page; absent on the last page", schema: { type: "string" } },
      link: { description: 'Link to the next page: <url>; rel="next"', schema: { type: "string" } },
    };
  }
  return response;
}

function operation(route: RouteDoc): Json {
  const op: Json = {
    tags: [route.tag],
    summary: route.summary,
    operationId: `${route.method}${route.path.replace(/[/:{}-]+(\w)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ""))}`,
    security: SECURITY[route.auth],
    parameters: [...parameters(route.params, "path"), ...parameters(route.query, "query")],
    responses: {
      [String(route.status)]: successResponse(route),
      default: {
        description: "Error envelope",
        content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } },
      },
    },
  };
  if (route.body || route.altBodyTypes?.length) {
    const content: Json = {};
    if (route.body) content["application/json"] = { schema: schemaOf(route.body, "input") };
    for (const type of route.altBodyTypes ?? []) content[type] = { schema: { type: "object" } };
    op.requestBody = { required: true, content };
  }
  return op;
}

/**
 * The OpenAPI 3.1 document of the API, generated from the route registry and the contracts' zod
 * schemas (zod 4's `z.toJSONSchema`, whose draft 2020-12 output is OpenAPI 3.1's dialect).
 */
export function buildOpenApi(registry: RouteRegistry, info: { title: string; version: string; serverUrl: string }): Json {
  const paths: Record<string, Json> = {};
  for (const route of registry.routes) {
    const path = route.path.replace(/:(\w+)/g, "{$1}");
    paths[path] = { ...(paths[path] ?? {}), [route.method]: operation(route) };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: info.title,
      version: info.version,
      description:
        "Business API. Every route except the MCP OAuth pair takes `Authorization: Bearer <JWT>` (verified locally, zero database queries). JSON routes answer `{ ok: true, data }`; lists answer an array with the next cursor in `x-next-cursor`; streaming and multipart routes answer raw. WebSocket: `/api/ws?token=<JWT>`.",
    },
    servers: [{ url: info.serverUrl }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
        sessionCookie: { type: "apiKey", in: "cookie", name: "<prefix>.session_token" },
      },
      schemas: { ErrorEnvelope: schemaOf(errorEnvelopeSchema, "output") },
    },
  };
}
