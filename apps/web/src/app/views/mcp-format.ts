import type { McpServerView } from "@app/contracts";
import { sentenceFor } from "../messages.js";

/** The status as a person reads it. */
export const STATUS_TEXT: Record<McpServerView["status"], string> = {
  connected: "connected",
  needs_reconnect: "needs reconnecting",
  not_connected: "not connected",
};

/**
 * The top-level address that starts connecting a server: the API's authorize route, reached by
 * navigation (never fetch) because it authenticates with the session cookie (docs/mcp.md).
 */
export function authorizeHref(apiBase: string, serverId: string): string {
  return `${apiBase.replace(/\/+$/, "")}/api/mcp-oauth/authorize?serverId=${encodeURIComponent(serverId)}`;
}

/** What the API's redirect back (`?mcp=connected|error&serverId=&code=`) said. */
export interface McpReturn {
  ok: boolean;
  serverId: string;
  /** The sentence to show (never the code). */
  sentence: string;
}

/**
 * Reads the query the API sends the browser back with (router.ts moves it into the hash,
 * `#/mcp?mcp=…`). `name` is the server's name when the page knows it.
 */
export function readMcpReturn(query: string, name?: string): McpReturn | undefined {
  const params = new URLSearchParams(query);
  const outcome = params.get("mcp");
  const serverId = params.get("serverId") ?? "";
  if (outcome === "connected") {
    return { ok: true, serverId, sentence: name ? `MCP server “${name}” is connected.` : "The MCP server is connected." };
  }
  if (outcome === "error") {
    const code = params.get("code") ?? "";
    return { ok: false, serverId, sentence: `Connecting failed. ${sentenceFor(code)}` };
  }
  return undefined;
}

interface JsonSchema {
  type?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: unknown;
  items?: JsonSchema;
  enum?: unknown[];
  description?: unknown;
}

function typeOf(schema: JsonSchema | undefined): string {
  if (!schema) return "any";
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  const type = Array.isArray(schema.type) ? schema.type.join(" | ") : typeof schema.type === "string" ? schema.type : "any";
  return type === "array" ? `${typeOf(schema.items)}[]` : type;
}

/** One argument of a tool, summarised from its JSON Schema. */
export interface ArgumentSummary {
  name: string;
  type: string;
  required: boolean;
  description?: string;
}

/** The top-level arguments a tool's input schema declares. */
export function summariseSchema(inputSchema: Record<string, unknown>): ArgumentSummary[] {
  const schema = inputSchema as JsonSchema;
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  return Object.entries(schema.properties ?? {}).map(([name, property]) => ({
    name,
    type: typeOf(property),
    required: required.has(name),
    ...(typeof property?.description === "string" ? { description: property.description } : {}),
  }));
}

const SAMPLE: Record<string, unknown> = { string: "", number: 0, integer: 0, boolean: false, array: [], object: {} };

/** A starting point for the arguments field: every declared argument with an empty value. */
export function argumentsTemplate(inputSchema: Record<string, unknown>): string {
  const properties = (inputSchema as JsonSchema).properties ?? {};
  const sample: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties)) {
    const type = Array.isArray(property?.type) ? property.type[0] : property?.type;
    sample[name] = typeof type === "string" && type in SAMPLE ? SAMPLE[type] : null;
  }
  return JSON.stringify(sample, null, 2);
}

/** The arguments field read as a JSON object, or the sentence that says what is wrong with it. */
export function parseArguments(text: string): { ok: true; value: Record<string, unknown> } | { ok: false; problem: string } {
  if (!text.trim()) return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `The arguments are not valid JSON: ${(error as Error).message}` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, problem: 'The arguments must be a JSON object, like {"text": "hello"}.' };
  }
  return { ok: true, value: value as Record<string, unknown> };
}
