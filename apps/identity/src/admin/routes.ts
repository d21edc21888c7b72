import type { AnyRoute } from "@app/http-kit";
import type { FeatureDeps } from "../features.js";

/** The routes of operators' user management. */
export function adminRoutes(_deps: FeatureDeps): AnyRoute[] {
  return [];
}
