import type { Http } from "./http.js";

/** The security event log: the user's own events and, for admins, everyone's. Filled in by the event log's work. */
export type AccountEventsApi = Record<string, never>;

/** Builds the {@link AccountEventsApi} over a transport. */
export function accountEventsApi(_http: Http): AccountEventsApi {
  return {};
}
