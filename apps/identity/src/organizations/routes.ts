import type { AnyRoute } from "@app/http-kit";
import type { FeatureDeps } from "../features.js";

/** The routes of organizations, members, invitations and teams. */
export function organizationRoutes(_deps: FeatureDeps): AnyRoute[] {
  return [];
}
