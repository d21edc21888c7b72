import type { CallMcpToolBody, McpTool, McpToolResult } from "@app/contracts";
import type { Prisma } from "@app/db";
import { AppError } from "@app/http-kit";
import { type PinnedTarget, pinnedFetch, ResponseTooLarge } from "@app/http-kit/outbound";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import { concurrencyLimitHeaders } from "../lib/user-caps.js";
import { rateLimitRefusals } from "../metrics.js";
import { upstreamFailure } from "./discovery.js";
import { mcpError } from "./errors.js";
import type { McpOAuthService } from "./oauth.js";
import type { McpServersService } from "./servers.js";

/** Settings of {@link McpToolsService} (MCP_CALL_TIMEOUT_MS, MCP_MAX_RESULT_BYTES, MCP_MAX_CALLS_PER_USER). */
export interface McpToolsSettings {
  resolve: (url: string) => Promise<PinnedTarget>;
  callTimeoutMs: number;
  maxResultBytes: number;
  maxCallsPerUser: number;
  logger: Logger;
}

const CLIENT_INFO = { name: "api", version: "1.0.0" };

/** True when the upstream refused the bearer token (401, or 403 for a scope it lacks). */
const refused = (error: unknown) => error instanceof StreamableHTTPError && (error.code === 401 || error.code === 403);

// The refusals of the concurrent-call cap below, 0 from the start (apps/api/src/metrics.ts).
rateLimitRefusals.inc({ limiter: "mcp-calls" }, 0);

/**
 * Lists and calls an MCP server's tools over Streamable HTTP with the SDK's `Client`, one short
 * session per request (connect, one call, close). Every request goes through the policy-enforcing
 * {@link pinnedFetch} with the stored bearer token; a refused token is refreshed once (see
 * McpOAuthService.accessToken in oauth.ts) and then answers 409
 * `mcp_reconnect_required`. Each call has a deadline and a byte cap on what the server sends, and
 * a user holds at most `maxCallsPerUser` calls at once.
 */
export class McpToolsService {
  readonly #inFlight = new Map<string, number>();

  constructor(
    private readonly servers: McpServersService,
    private readonly oauth: McpOAuthService,
    private readonly settings: McpToolsSettings,
  ) {}

  async list(userId: string, serverId: string): Promise<McpTool[]> {
    return this.#limited(userId, () =>
      this.#withClient(userId, serverId, async (client, options) => {
        const tools = [];
        let cursor: string | undefined;
        do {
          const page = await client.listTools(cursor ? { cursor } : undefined, options);
          tools.push(...page.tools);
          cursor = page.nextCursor;
        } while (cursor && tools.length < 1_000);
        return tools.map((t) => ({ name: t.name, description: t.description ?? null, inputSchema: t.inputSchema }));
      }),
    );
  }

  async call(userId: string, serverId: string, name: string, body: CallMcpToolBody): Promise<McpToolResult> {
    return this.#limited(userId, () =>
      this.#withClient(userId, serverId, async (client, options) => {
        const result = await client.callTool({ name, arguments: body.arguments }, undefined, options);
        if (Buffer.byteLength(JSON.stringify(result)) > this.settings.maxResultBytes)
          throw new ResponseTooLarge(this.settings.maxResultBytes);
        return result as McpToolResult;
      }),
    );
  }

  /** The per-user cap on concurrent MCP requests (429 `rate_limited` beyond it). */
  async #limited<T>(userId: string, run: () => Promise<T>): Promise<T> {
    const held = this.#inFlight.get(userId) ?? 0;
    if (held >= this.settings.maxCallsPerUser) {
      rateLimitRefusals.inc({ limiter: "mcp-calls" });
      throw new AppError("rate_limited", `at most ${this.settings.maxCallsPerUser} MCP tool requests at once`, {
        headers: { "retry-after": "1", ...concurrencyLimitHeaders("mcp-calls", this.settings.maxCallsPerUser, 0) },
      });
    }
    this.#inFlight.set(userId, held + 1);
    try {
      return await run();
    } finally {
      const left = (this.#inFlight.get(userId) ?? 1) - 1;
      if (left > 0) this.#inFlight.set(userId, left);
      else this.#inFlight.delete(userId);
    }
  }

  async #withClient<T>(userId: string, serverId: string, use: (client: Client, options: { timeout: number }) => Promise<T>): Promise<T> {
    let server: Prisma.McpServerModel = await this.servers.row(userId, serverId);
    let token = await this.oauth.accessToken(server);
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.#session(server.url, token, use);
      } catch (error) {
        if (!refused(error)) throw this.#mapped(error);
        if (attempt > 0) {
          await this.oauth.markNeedsReconnect(server.id);
          throw mcpError("mcp_reconnect_required", "the MCP server refused the authorization: authorize it again");
        }
        token = await this.oauth.accessToken(server, true);
        server = await this.servers.row(userId, serverId);
      }
    }
  }

  async #session<T>(url: string, token: string | undefined, use: (client: Client, options: { timeout: number }) => Promise<T>): Promise<T> {
    const { callTimeoutMs, maxResultBytes } = this.settings;
    let tooLarge: (() => void) | undefined;
    const overCap = new Promise<never>((_, reject) => {
      tooLarge = () => reject(new ResponseTooLarge(maxResultBytes));
    });
    overCap.catch(() => undefined);
    const fetchFn = pinnedFetch({
      resolve: this.settings.resolve,
      timeoutMs: callTimeoutMs + 1_000,
      maxBytes: maxResultBytes,
      onTooLarge: () => tooLarge?.(),
    });
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      fetch: fetchFn,
      ...(token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}),
    });
    const client = new Client(CLIENT_INFO);
    // A failure inside the transport (a body cut at the cap) may not reject the pending request.
    client.onerror = () => undefined;
    try {
      const options = { timeout: callTimeoutMs };
      return await Promise.race([client.connect(transport, options).then(() => use(client, options)), overCap]);
    } finally {
      await client.close().catch(() => undefined);
    }
  }

  /** Coded answers for everything an upstream can do wrong. */
  #mapped(error: unknown): Error {
    if (error instanceof AppError) return error;
    if (error instanceof ResponseTooLarge)
      return mcpError("mcp_result_too_large", `the MCP server answered more than ${this.settings.maxResultBytes} bytes`);
    if (error instanceof McpError) {
      if (error.code === ErrorCode.RequestTimeout)
        return mcpError("mcp_upstream_timeout", `the MCP server did not answer within ${this.settings.callTimeoutMs} ms`);
      if (error.code === ErrorCode.InvalidParams) return new AppError("bad_request", error.message.slice(0, 500));
    }
    if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
      return mcpError("mcp_upstream_timeout", `the MCP server did not answer within ${this.settings.callTimeoutMs} ms`);
    }
    this.settings.logger.warn({ err: error instanceof Error ? error.message : String(error) }, "MCP request failed");
    return upstreamFailure("the MCP request", error);
  }
}
