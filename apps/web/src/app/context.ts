import type { AppClient } from "@app/client";

/** The signed-in user as the app shows it (from the session or from GET /api/me). */
export interface CurrentUser {
  id: string;
  email: string | null;
  name: string | null;
  /** From get-session (GET /api/me does not say); undefined while unknown. */
  emailVerified?: boolean;
}

/** What every view gets. */
export interface AppContext {
  client: AppClient;
  user: CurrentUser | null;
  /**
   * Whether the user may open the admin page. GET /api/me reports no roles (the JWT carries none,
   * by contract), so the app asks /api/admin/users once per sign-in: 403 means no.
   */
  isAdmin: boolean;
  /** Seconds between session checks (`SESSION_RECHECK_SECONDS`), for the pages that say how soon other devices sign out. */
  sessionRecheckSeconds: number;
  /** Goes to a hash route, e.g. `#/tasks`; `notice` is shown on the page it opens. */
  navigate(route: string, notice?: string): void;
  /** Records a successful sign-in or sign-up and opens the task list. */
  signedIn(user: CurrentUser): void;
  /** Forgets the user (whose session ended), drops the JWT and opens sign-in with `notice`: the one signed-out state. */
  signedOut(notice: string): void;
  /** Shows a problem in the page's alert area, as a plain sentence (never a code). */
  showError(error: unknown): void;
  /** Shows a short confirmation in the page's status area. */
  showNotice(text: string): void;
}

/** A view renders into `root` and may return a cleanup run when the route changes. */
export type View = (ctx: AppContext, root: HTMLElement, params: Record<string, string>) => undefined | (() => void);
