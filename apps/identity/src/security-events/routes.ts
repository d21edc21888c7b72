import type { AnyRoute } from "@app/http-kit";
import type { FeatureDeps } from "../features.js";

/** The security event log's routes: the user's own events and the admins' query over everyone's. */
export function securityEventRoutes(_features: FeatureDeps): AnyRoute[] {
  return [];
}
