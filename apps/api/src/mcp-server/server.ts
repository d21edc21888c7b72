import type { Verifier } from "@app/auth-verify";
import type { AnyRoute } from "@app/http-kit";
import type { Logger } from "pino";
import type { CapsRedis } from "../lib/caps-redis.js";
import type { UserCaps } from "../lib/user-caps.js";
import { UserRates } from "../lib/user-rates.js";
import { type McpResource, mcpBearer, mcpVerifier } from "./grant.js";
import { mcpResourceRoutes } from "./routes.js";
import type { McpToolDeps } from "./tools.js";

/** Length of the window of the per-user tool call rate. */
export const TOOL_CALL_WINDOW_MS = 60_000;

/** What the API's MCP server is built from (app.ts). */
export interface McpServerDeps {
  resource: McpResource & { toolCallsPerMinute: number };
  /** The business routes' verifier, whose key set the access tokens share. */
  verifier: Verifier;
  /** This instance's deleted accounts (account/deleted-users.ts): their tokens are refused here too. */
  deleted: { has(userId: string): boolean };
  caps: UserCaps;
  /** The per-user caps' Redis, which also holds the tool call rates across instances. */
  redis: CapsRedis | undefined;
  tools: McpToolDeps;
  logger: Logger;
  now?: (() => number) | undefined;
}

/** The MCP server's routes (routes.ts) and what its shutdown stops. */
export function createMcpServer(deps: McpServerDeps): { routes: AnyRoute[]; verifier: Verifier; close(): void } {
  const verifier = mcpVerifier(deps.verifier, deps.resource, deps.now);
  const rates = new UserRates({
    limits: { mcpToolCalls: { max: deps.resource.toolCallsPerMinute, windowMs: TOOL_CALL_WINDOW_MS } },
    redis: deps.redis,
    logger: deps.logger,
    ...(deps.now ? { now: deps.now } : {}),
  });
  const routes = mcpResourceRoutes({
    resource: deps.resource,
    bearer: mcpBearer(verifier, deps.resource, deps.deleted),
    caps: deps.caps,
    rates,
    tools: deps.tools,
  });
  return { routes, verifier, close: () => verifier.close() };
}
