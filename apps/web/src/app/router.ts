/** A parsed hash route. */
export interface Route {
  name: "signin" | "tasks" | "task" | "upload" | "generate" | "admin";
  params: Record<string, string>;
}

/** Parses `location.hash` (`#/tasks/abc` → task abc). Unknown routes are the task list. */
export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  const [head, id] = parts;
  if (head === "signin") return { name: "signin", params: {} };
  if (head === "tasks" && id) return { name: "task", params: { id } };
  if (head === "upload" || head === "generate" || head === "admin") return { name: head, params: {} };
  return { name: "tasks", params: {} };
}

/** The hash of a task's page. */
export function taskHref(id: string): string {
  return `#/tasks/${encodeURIComponent(id)}`;
}
