import type { ErrorCode } from "@app/contracts";
import { AppError } from "@app/http-kit";

/**
 * The coded answers of the MCP routes when the upstream server is the problem; their statuses are
 * in packages/contracts/src/errors.ts, so the web app can tell "authorize again" (409) from
 * "server down" (502) and "too slow" (504); none of them is ever a 500.
 * - `mcp_reconnect_required`: tokens refused and not refreshable; the user authorizes again.
 * - `mcp_upstream_unavailable`: not reachable, refused by the outbound URL policy, or not
 *   speaking MCP / OAuth.
 * - `mcp_upstream_invalid`: the server's or its authorization server's metadata contradicts
 *   itself or the policy.
 * - `mcp_result_too_large`: the tool's answer is larger than MCP_MAX_RESULT_BYTES.
 * - `mcp_upstream_timeout`: the tool did not answer within MCP_CALL_TIMEOUT_MS.
 */
const MCP_ERROR_CODES = [
  "mcp_reconnect_required",
  "mcp_upstream_unavailable",
  "mcp_upstream_invalid",
  "mcp_result_too_large",
  "mcp_upstream_timeout",
] as const satisfies readonly ErrorCode[];
export type McpErrorCode = (typeof MCP_ERROR_CODES)[number];

/** True for one of the codes above. */
export const isMcpErrorCode = (code: string): code is McpErrorCode => (MCP_ERROR_CODES as readonly string[]).includes(code);

/**
 * An {@link AppError} with an MCP code. The message is always exposed: it never carries a token
 * or an upstream body.
 */
export function mcpError(code: McpErrorCode, message: string, cause?: unknown): AppError {
  return new AppError(code, message, { expose: true, ...(cause === undefined ? {} : { cause }) });
}
