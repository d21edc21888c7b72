import type { AnyRoute } from "@app/http-kit";
import type { FeatureDeps } from "../features.js";

/** The admin's webhook routes (`/api/auth/admin/webhooks`). */
export function webhookRoutes(_features: FeatureDeps): AnyRoute[] {
  return [];
}
