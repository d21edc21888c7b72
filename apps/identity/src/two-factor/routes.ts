import type { AnyRoute } from "@app/http-kit";
import type { FeatureDeps } from "../features.js";

/** The routes of second factors (TOTP, backup codes, emailed codes). */
export function twoFactorRoutes(_deps: FeatureDeps): AnyRoute[] {
  return [];
}
