/** The pages of the app. */
export const ROUTE_NAMES = [
  "signin",
  "tasks",
  "task",
  "upload",
  "generate",
  "projects",
  "agents",
  "chats",
  "chat",
  "mcp",
  "settings",
  "admin",
] as const;

/** A parsed hash route. */
export interface Route {
  name: (typeof ROUTE_NAMES)[number];
  params: Record<string, string>;
}

/** Pages reached with no id in the hash. */
const SIMPLE = new Set<string>(["signin", "upload", "generate", "projects", "agents", "mcp", "settings", "admin"]);

/**
 * Parses `location.hash` (`#/tasks/abc` → task abc, `#/chats/abc` → chat abc). Unknown routes
 * are the task list. Account pages will join this list as `#/account…`.
 */
export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("?")[0]?.split("/").filter(Boolean).map(decodeURIComponent) ?? [];
  const [head, id] = parts;
  if (head === "tasks" && id) return { name: "task", params: { id } };
  if (head === "chats") return id ? { name: "chat", params: { id } } : { name: "chats", params: {} };
  if (head && SIMPLE.has(head)) return { name: head as Route["name"], params: {} };
  return { name: "tasks", params: {} };
}

/** The hash of a task's page. */
export function taskHref(id: string): string {
  return `#/tasks/${encodeURIComponent(id)}`;
}

/** The hash of a chat's page. */
export function chatHref(id: string): string {
  return `#/chats/${encodeURIComponent(id)}`;
}
