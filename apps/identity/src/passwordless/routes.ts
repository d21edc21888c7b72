import type { AnyRoute } from "@app/http-kit";
import type { FeatureDeps } from "../features.js";

/** The routes of sign-in by mail (magic links and emailed codes). */
export function passwordlessRoutes(_deps: FeatureDeps): AnyRoute[] {
  return [];
}
