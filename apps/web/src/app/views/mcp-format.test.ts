import { describe, expect, it } from "vitest";
import { landingHash } from "../router.js";
import { argumentsTemplate, authorizeHref, parseArguments, readMcpReturn, summariseSchema } from "./mcp-format.js";

const schema = {
  type: "object",
  properties: {
    text: { type: "string", description: "What to repeat" },
    count: { type: "number" },
    tags: { type: "array", items: { type: "string" } },
  },
  required: ["text"],
};

describe("MCP page helpers", () => {
  it("connects through the API's authorize route, the server id escaped", () => {
    expect(authorizeHref("http://localhost:4000/", "a b")).toBe("http://localhost:4000/api/mcp-oauth/authorize?serverId=a%20b");
  });

  it("moves the API's return query into the MCP page's hash, dropping anything else", () => {
    expect(landingHash("/", "?mcp=connected&serverId=s1")).toBe("#/mcp?mcp=connected&serverId=s1");
    expect(landingHash("/", "?mcp=error&serverId=s1&code=mcp_upstream_timeout&x=1")).toBe(
      "#/mcp?mcp=error&serverId=s1&code=mcp_upstream_timeout",
    );
    expect(landingHash("/", "?verified=1")).toBeUndefined();
  });

  it("says the outcome in a sentence, never the code", () => {
    expect(readMcpReturn("mcp=connected&serverId=s1", "Docs")).toEqual({
      ok: true,
      serverId: "s1",
      sentence: "MCP server “Docs” is connected.",
    });
    const failed = readMcpReturn("mcp=error&serverId=s1&code=mcp_upstream_timeout");
    expect(failed?.ok).toBe(false);
    expect(failed?.sentence).toBe("Connecting failed. The MCP server took too long to answer. Try again later.");
    expect(failed?.sentence).not.toContain("mcp_");
    expect(readMcpReturn("mcp=error&code=whatever")?.sentence).toBe("Connecting failed. Something went wrong. Try again in a moment.");
    expect(readMcpReturn("")).toBeUndefined();
  });

  it("summarises a tool's input schema and offers a template of its arguments", () => {
    expect(summariseSchema(schema)).toEqual([
      { name: "text", type: "string", required: true, description: "What to repeat" },
      { name: "count", type: "number", required: false },
      { name: "tags", type: "string[]", required: false },
    ]);
    expect(JSON.parse(argumentsTemplate(schema))).toEqual({ text: "", count: 0, tags: [] });
    expect(summariseSchema({ type: "object" })).toEqual([]);
  });

  it("reads the arguments as a JSON object, or says what is wrong", () => {
    expect(parseArguments('{"a": 1}')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseArguments("  ")).toEqual({ ok: true, value: {} });
    const broken = parseArguments("{a: 1}");
    expect(broken.ok).toBe(false);
    expect(!broken.ok && broken.problem).toMatch(/^The arguments are not valid JSON/);
    expect(parseArguments("[1]")).toEqual({ ok: false, problem: 'The arguments must be a JSON object, like {"text": "hello"}.' });
  });
});
