import { AppError } from "@app/http-kit";

/**
 * The coded answers of the MCP routes when the upstream server is the problem. Each maps to its
 * own status so the web app can tell "authorize again" (409) from "server down" (502) and "too
 * slow" (504); none of them is ever a 500.
 */
export const MCP_ERROR_STATUS = {
  /** Tokens refused and not refreshable: the user must run the authorization again. */
  mcp_reconnect_required: 409,
  /** Not reachable, refused by the outbound URL policy, or not speaking MCP / OAuth. */
  mcp_upstream_unavailable: 502,
  /** The server's or its authorization server's metadata contradicts itself or the policy. */
  mcp_upstream_invalid: 502,
  /** The tool's answer is larger than MCP_MAX_RESULT_BYTES. */
  mcp_result_too_large: 502,
  /** The tool did not answer within MCP_CALL_TIMEOUT_MS. */
  mcp_upstream_timeout: 504,
} as const;
export type McpErrorCode = keyof typeof MCP_ERROR_STATUS;

/** True for one of the codes above. */
export const isMcpErrorCode = (code: string): code is McpErrorCode => Object.hasOwn(MCP_ERROR_STATUS, code);

/**
 * An {@link AppError} with an MCP code. The shared code table (packages/contracts/src/errors.ts)
 * does not list these codes, so the code and status are set on the instance; the one error
 * middleware (packages/http-kit) reads both from it and always exposes the message, which never
 * carries a token or an upstream body.
 */
export function mcpError(code: McpErrorCode, message: string, cause?: unknown): AppError {
  const error = new AppError("conflict", message, { expose: true, ...(cause === undefined ? {} : { cause }) });
  Object.defineProperty(error, "code", { value: code, enumerable: true });
  Object.defineProperty(error, "status", { value: MCP_ERROR_STATUS[code], enumerable: true });
  return error;
}
