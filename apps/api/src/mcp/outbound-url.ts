// The outbound URL policy is shared with identity's webhooks: packages/http-kit/src/outbound/.
// This module names it where app.ts, the MCP tests and docs/mcp.md look for it.
export {
  isForbiddenAddress,
  OutboundUrlPolicy,
  type OutboundUrlPolicyOptions,
  OutboundUrlRefused,
  type PinnedTarget,
  type ResolveAll,
} from "@app/http-kit/outbound";
