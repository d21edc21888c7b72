import { errorEnvelopeSchema, NEXT_CURSOR_HEADER } from "@app/contracts";
import { z } from "zod";
import { type AnyRoute, defineRoute } from "./spec.js";
import type { RouteTable } from "./table.js";

type Json = Record<string, unknown>;

/** What a service says about itself in its OpenAPI document. */
export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
  serverUrl: string;
  /** Security schemes named by the table's guards (`Guard.security`). */
  securitySchemes?: Record<string, Json>;
}

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

const envelope = (data: Json): Json => ({ type: "object", required: ["ok", "data"], properties: { ok: { const: true }, data } });

function successResponse(route: AnyRoute): Json {
  const status = route.status ?? 200;
  const reply = route.reply ?? "envelope";
  if (status === 204) return { description: "No content" };
  if (typeof reply === "object" && reply.raw === "redirect") {
    return { description: "Redirect", headers: { location: { schema: { type: "string" } } } };
  }
  if (typeof reply === "object" && reply.raw !== "application/json") {
    return { description: "Raw response (not wrapped)", content: { [reply.raw]: { schema: { type: "string" } } } };
  }
  const data = route.response ? schemaOf(route.response, "output") : {};
  const wrapped = reply === "envelope";
  const response: Json = {
    description: wrapped ? "ok(data)" : "Raw JSON (not wrapped)",
    content: { "application/json": { schema: wrapped ? envelope(data) : data } },
  };
  if (route.paginated) {
    response.headers = {
      [NEXT_CURSOR_HEADER]: { description: "Opaque cursor of the next page; absent on the last page", schema: { type: "string" } },
      link: { description: 'Link to the next page: <url>; rel="next"', schema: { type: "string" } },
    };
  }
  return response;
}

function operationId(route: AnyRoute): string {
  return `${route.method}${route.path.replace(/[/:{}.-]+(\w)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ""))}`;
}

function operation(route: AnyRoute): Json {
  const guards = route.guards ?? [];
  const security = guards.flatMap((g) => (g.security ? [{ [g.security]: [] }] : []));
  const op: Json = {
    tags: [route.tag],
    summary: route.summary,
    operationId: operationId(route),
    security,
    parameters: [...parameters(route.params, "path"), ...parameters(route.query, "query")],
    responses: {
      [String(route.status ?? 200)]: successResponse(route),
      default: {
        description: "Error envelope",
        content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } },
      },
    },
  };
  if (guards.length) op["x-guards"] = guards.map((g) => g.name);
  const bodyTypes = guards.flatMap((g) => g.bodyTypes ?? []);
  if (route.body || bodyTypes.length) {
    const content: Json = {};
    if (route.body) content["application/json"] = { schema: schemaOf(route.body, "input") };
    for (const type of bodyTypes) if (!content[type]) content[type] = { schema: { type: "object" } };
    op.requestBody = { required: true, content };
  }
  return op;
}

/**
 * The OpenAPI 3.1 document of a route table, generated from its routes and the contracts' zod
 * schemas (zod 4's `z.toJSONSchema`, whose draft 2020-12 output is OpenAPI 3.1's dialect).
 */
export function buildOpenApi(table: RouteTable, info: OpenApiInfo): Json {
  const paths: Record<string, Json> = {};
  for (const route of table.routes) {
    const path = route.path.replace(/:(\w+)/g, "{$1}");
    paths[path] = { ...(paths[path] ?? {}), [route.method]: operation(route) };
  }
  return {
    openapi: "3.1.0",
    info: { title: info.title, version: info.version, description: info.description },
    servers: [{ url: info.serverUrl }],
    paths,
    components: {
      securitySchemes: info.securitySchemes ?? {},
      schemas: { ErrorEnvelope: schemaOf(errorEnvelopeSchema, "output") },
    },
  };
}

/**
 * `GET <path>`: the OpenAPI document of `table` (public; built once, on first use, so routes
 * added to the table after this one are in it). Each service declares it on its own table.
 */
export function openApiRoute(table: RouteTable, path: string, info: OpenApiInfo): AnyRoute {
  let cached: string | undefined;
  return defineRoute({
    method: "get",
    path,
    tag: "docs",
    summary: "This document",
    reply: { raw: "application/json" },
    handler: ({ res }) => {
      cached ??= JSON.stringify(buildOpenApi(table, info));
      res.setHeader("content-type", "application/json; charset=utf-8");
      res.setHeader("cache-control", "public, max-age=300");
      res.status(200).send(cached);
    },
  });
}
