import { describe, expect, it } from "vitest";
import { apiMcpEnv, startMcpSample, wantsMcpSample } from "./mcp-sample.js";

describe("the sample MCP server of pnpm start", () => {
  it("runs only with MCP_SAMPLE=true, and never in production", () => {
    expect(wantsMcpSample({})).toBe(false);
    expect(wantsMcpSample({ MCP_SAMPLE: "true" })).toBe(true);
    expect(wantsMcpSample({ MCP_SAMPLE: "1" })).toBe(false);
    expect(wantsMcpSample({ MCP_SAMPLE: "true", NODE_ENV: "production" })).toBe(false);
  });

  it("lets the API reach the sample's own origin only (never every private address), and returns to the web app's MCP page", () => {
    expect(apiMcpEnv({}, undefined, undefined)).toEqual({});
    const env = apiMcpEnv({}, "http://localhost:5173", "http://127.0.0.1:41234/mcp");
    expect(env).toEqual({
      MCP_OAUTH_RETURN_URL: "http://localhost:5173/#/mcp",
      MCP_ALLOW_PRIVATE_ORIGINS: "http://127.0.0.1:41234",
    });
    expect(env).not.toHaveProperty("MCP_ALLOW_PRIVATE_URLS");
    expect(apiMcpEnv({ MCP_OAUTH_RETURN_URL: "https://app.example.com/#/mcp" }, "http://localhost:5173", undefined)).toEqual({});
  });

  it("serves a real MCP endpoint that asks for a token and names its protected resource metadata", async () => {
    const sample = await startMcpSample();
    try {
      expect(sample.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      const res = await fetch(sample.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(
        /resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/,
      );
      const metadata = await fetch(new URL("/.well-known/oauth-authorization-server", sample.url));
      expect(((await metadata.json()) as { registration_endpoint?: string }).registration_endpoint).toMatch(/\/register$/);
    } finally {
      await sample.close();
    }
  });
});
