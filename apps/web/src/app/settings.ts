/** How the task page follows a task's events. */
export type Transport = "sse" | "ws";

const KEY = "dev.transport";

/** The developer setting for the task page's transport (SSE unless switched on the settings page). */
export function getTransport(): Transport {
  try {
    return localStorage.getItem(KEY) === "ws" ? "ws" : "sse";
  } catch {
    return "sse";
  }
}

/** Stores the transport setting (per browser). */
export function setTransport(value: Transport): void {
  try {
    localStorage.setItem(KEY, value);
  } catch {
    // Storage refused (private mode): the setting lasts for this page only.
  }
}
