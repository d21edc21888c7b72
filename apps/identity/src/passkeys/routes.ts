import type { AnyRoute } from "@app/http-kit";
import type { FeatureDeps } from "../features.js";

/** The routes of passkeys (WebAuthn). */
export function passkeyRoutes(_deps: FeatureDeps): AnyRoute[] {
  return [];
}
