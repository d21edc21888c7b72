// The pinned requests are shared with identity's webhooks: packages/http-kit/src/outbound/.
// This module names them where docs/mcp.md looks for them.
export {
  type FetchLike,
  type PinnedFetchOptions,
  type PinnedPostOptions,
  type PinnedResponse,
  pinnedFetch,
  pinnedLookup,
  pinnedPost,
  ResponseTooLarge,
} from "@app/http-kit/outbound";
