import type { AppClient, SignedIn } from "@app/client";
import type { OrganizationView } from "@app/contracts";

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
  /**
   * The session's active organization (get-session's `session.activeOrganizationId`; never in the
   * JWT): the projects page lists and creates its projects. Null: the user's own.
   */
  activeOrganizationId: string | null;
  /** The organizations the user belongs to, for the header's switcher (empty until loaded). */
  organizations: OrganizationView[];
  /** The admin acting as this user (get-session's `session.impersonatedBy`), or null. */
  impersonatedBy: string | null;
  /** Reads the session's active organization and impersonator and the user's organizations again, then redraws the header. */
  refreshSession(): Promise<void>;
  /** Makes `id` the active organization (null: the user's own work) and redraws the page. */
  setActiveOrganization(id: string | null): Promise<void>;
  /** The cookie session moved to another user (impersonation began or ended): the app now acts as `signedIn`'s user and opens `route`. */
  switchedUser(signedIn: SignedIn, route: string, notice?: string): void;
  /** The page the next sign-in opens instead of the task list (an invitation waiting to be answered). */
  returnAfterSignIn(route: string): void;
  /** Seconds between session checks (`SESSION_RECHECK_SECONDS`), for the pages that say how soon other devices sign out. */
  sessionRecheckSeconds: number;
  /** Goes to a hash route, e.g. `#/tasks`; `notice` is shown on the page it opens. */
  navigate(route: string, notice?: string): void;
  /** Records a successful sign-in or sign-up and opens the task list (or the page {@link returnAfterSignIn} named). */
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
