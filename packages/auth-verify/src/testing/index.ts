/**
 * `@app/auth-verify/testing`: test-only helpers shared by the packages that test the primitive
 * and its entries (never imported by production code).
 * @packageDocumentation
 */
export {
  buildHostileTokens,
  type CorpusKey,
  type HostileCorpusOptions,
  type HostileHeaderCase,
  type HostileToken,
  hostileAuthorizationCases,
} from "./hostile-tokens.js";
