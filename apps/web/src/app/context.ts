import type { AppClient } from "@app/client";

/** The signed-in user as the app shows it (from the session or from GET /api/me). */
export interface CurrentUser {
  id: string;
  email: string | null;
  name: string | null;
}

/** What every view gets. */
export interface AppContext {
  client: AppClient;
  user: CurrentUser | null;
  /** Goes to a hash route, e.g. `#/tasks`. */
  navigate(route: string): void;
  /** Records a successful sign-in or sign-up and opens the task list. */
  signedIn(user: CurrentUser): void;
  /** Shows a problem in the page's alert area (an ApiError's code and message). */
  showError(error: unknown): void;
}

/** A view renders into `root` and may return a cleanup run when the route changes. */
export type View = (ctx: AppContext, root: HTMLElement, params: Record<string, string>) => undefined | (() => void);
