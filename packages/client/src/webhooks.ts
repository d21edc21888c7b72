import type { Http } from "./http.js";

/** Admins' webhook endpoints and their delivery logs. Filled in by the webhooks' work. */
export type WebhookAdminApi = Record<string, never>;

/** Builds the {@link WebhookAdminApi} over a transport. */
export function webhookAdminApi(_http: Http): WebhookAdminApi {
  return {};
}
