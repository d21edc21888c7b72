// The outbound URL policy and the DNS-rebinding-safe requests built on it, for every request the
// services send to a URL a user chose (the API's MCP servers, identity's webhook endpoints).
export {
  DEFAULT_MAX_RESPONSE_BYTES,
  type FetchLike,
  type PinnedFetchOptions,
  type PinnedPostOptions,
  type PinnedResponse,
  pinnedFetch,
  pinnedLookup,
  pinnedPost,
  ResponseTooLarge,
} from "./pinned-request.js";
export {
  isForbiddenAddress,
  isLoopbackAddress,
  OutboundUrlPolicy,
  type OutboundUrlPolicyOptions,
  OutboundUrlRefused,
  type PinnedTarget,
  type ResolveAll,
} from "./url-policy.js";
