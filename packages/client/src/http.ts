import { AUTH_BASE_PATH, okSchema, SET_AUTH_JWT_HEADER, type SessionResponse, sessionResponse } from "@app/contracts";
import { z } from "zod";
import { ApiError, errorFromResponse, networkError } from "./errors.js";
import type { TokenStore } from "./storage.js";

/** A `fetch` function (the global one by default; inject one for tests or non-browser use). */
export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

/** Options of a business request. */
export interface SendOptions extends Omit<RequestInit, "headers"> {
  headers?: Record<string, string>;
}

/** What a refresh attempt learned: a session and its JWT, or that there is no session. */
export interface RefreshResult {
  token: string | null;
  session: SessionResponse | null;
}

/** The user of the cookie session, as get-session last answered. */
export type SessionUser = SessionResponse["user"];

/**
 * The transport: identity calls with the session cookie (`credentials: "include"`), business
 * calls with `Authorization: Bearer <authToken>` (never the cookie). A business call that
 * answers 401 (an expired JWT, with a short JWT_EXPIRES_IN, or a refused one) asks get-session
 * once (the cookie may still be valid), stores the fresh JWT and is sent again, once: a second
 * 401 stands and ends the session. If get-session yields no JWT, the 401 stands and the stored
 * token is removed; if it yields another user's (the cookie changed hands), the call is not sent
 * again as that user and the session ends.
 */
export class Http {
  readonly baseUrl: string;
  readonly tokens: TokenStore;
  readonly #fetch: FetchLike;
  #refreshing: Promise<RefreshResult> | undefined;
  /** {@link switches} when the shared refresh was sent. */
  #refreshingAt = 0;
  #user: SessionUser | undefined;
  /** Counts the switches this client makes itself (impersonation): a new user then is no news. */
  #switches = 0;
  readonly #live = new Set<() => void>();
  readonly #ended = new Set<() => void>();

  constructor(options: { baseUrl: string; tokens: TokenStore; fetch: FetchLike }) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.tokens = options.tokens;
    this.#fetch = options.fetch;
    // Without a JWT no stream or socket of this client may go on: whoever dropped it (sign-out,
    // deletion, an ended session), they close with it.
    this.tokens.subscribe((token) => {
      if (token) return;
      this.#user = undefined;
      this.closeLive();
    });
  }

  /** The session's user as the last get-session answered; undefined before one and once the JWT is dropped. */
  get user(): SessionUser | undefined {
    return this.#user;
  }

  /** How many user switches this client started ({@link beginUserSwitch}); checks compare it around a refresh. */
  get switches(): number {
    return this.#switches;
  }

  /**
   * This client is about to move its cookie session to another user itself (impersonating one, or
   * going back to the admin): a refresh that meets the other user from now on is expected, not a
   * sign that the session ended.
   */
  beginUserSwitch(): void {
    this.#switches += 1;
  }

  /** Registers the close of a live stream or socket, run when the JWT is dropped; returns the unregister. */
  track(close: () => void): () => void {
    this.#live.add(close);
    return () => void this.#live.delete(close);
  }

  /** Closes every registered stream and socket. */
  closeLive(): void {
    const all = [...this.#live];
    this.#live.clear();
    for (const close of all) close();
  }

  /** Subscribes to {@link endSession}'s news; returns the unsubscribe function. */
  onSessionEnded(listener: () => void): () => void {
    this.#ended.add(listener);
    return () => void this.#ended.delete(listener);
  }

  /**
   * The cookie session is over (get-session found none, identity refused the cookie, or the
   * cookie now belongs to another user): drops the JWT, closes every stream and socket, and tells
   * the listeners when this client was signed in. The JWT itself stays valid until it expires
   * (docs/accounts.md, "What a JWT keeps"); the client just stops using it.
   */
  endSession(): void {
    const wasSignedIn = this.tokens.get() !== null || this.#user !== undefined;
    this.#user = undefined;
    this.tokens.set(null);
    this.closeLive();
    if (wasSignedIn) for (const listener of [...this.#ended]) listener();
  }

  /** Absolute URL of a path on the service. */
  url(path: string): string {
    return `${this.baseUrl}${path}`;
  }

  /** A raw call, mapped to {@link ApiError} when no response arrives. */
  async fetch(path: string, init: RequestInit): Promise<Response> {
    try {
      return await this.#fetch(this.url(path), init);
    } catch (cause) {
      throw networkError(cause);
    }
  }

  /** A call to the identity area (`/api/auth/*`) carrying the session cookie. */
  identity(path: string, init: RequestInit = {}): Promise<Response> {
    return this.fetch(`${AUTH_BASE_PATH}${path}`, { ...init, credentials: "include" });
  }

  /**
   * Step 2 of the login: POST get-session with the cookie, awaited; stores the JWT from
   * `set-auth-jwt` and remembers the session's user. With no session (401) the session is over
   * ({@link endSession}) and the result is empty. Concurrent callers share one request, unless
   * this client switched users since it was sent: its answer is of the cookie before the switch.
   */
  refresh(): Promise<RefreshResult> {
    if (this.#refreshing && this.#refreshingAt === this.#switches) return this.#refreshing;
    const at = this.#switches;
    const run = this.#doRefresh(at).finally(() => {
      if (this.#refreshing === run) this.#refreshing = undefined;
    });
    this.#refreshing = run;
    this.#refreshingAt = at;
    return run;
  }

  async #doRefresh(at: number): Promise<RefreshResult> {
    const response = await this.identity("/get-session", { method: "POST", headers: { accept: "application/json" } });
    // Sent before a user switch of this client: it tells nothing about the cookie now, so it
    // neither stores a JWT nor ends the session.
    const stale = at !== this.#switches;
    if (response.status === 401) {
      await response.body?.cancel().catch(() => undefined);
      if (stale) return { token: null, session: null };
      await response.body?.cancel().catch(() => undefined);
      this.endSession();
      return { token: null, session: null };
    }
    if (!response.ok) throw await errorFromResponse(response);
    const session = await readJson(response, sessionResponse);
    // Cross-origin, the header is readable only if the service lists it in its exposed CORS headers.
    const token = response.headers.get(SET_AUTH_JWT_HEADER);
    if (stale) return { token, session };
    this.tokens.set(token);
    if (token) this.#user = session.user;
    return { token, session };
  }

  /** A business call with the bearer JWT, sent once more after a successful refresh on 401 (never twice). */
  async send(path: string, options: SendOptions = {}): Promise<Response> {
    const attempt = (token: string | null) =>
      this.fetch(path, {
        ...options,
        credentials: "omit",
        headers: { ...options.headers, ...(token ? { authorization: `Bearer ${token}` } : {}) },
      });
    const sent = this.tokens.get();
    const user = this.#user?.id;
    const switches = this.#switches;
    const first = await attempt(sent);
    if (first.status !== 401) return first;
    // A concurrent call may already have refreshed while this one was in flight: then retry with
    // the token it stored instead of asking get-session again.
    const current = this.tokens.get();
    const { token } = current && current !== sent ? { token: current } : await this.refresh().catch(() => ({ token: null }));
    if (!token) return first;
    // The request was made for `user`; the cookie now names someone else (a sign-in or an
    // impersonation in another tab). Sending it again would act as them.
    if (user !== undefined && this.#user?.id !== user && this.#switches === switches) {
      this.endSession();
      return first;
    }
    await first.body?.cancel().catch(() => undefined);
    const second = await attempt(token);
    if (second.status === 401) this.endSession();
    return second;
  }

  /** A business call answering 2xx or throwing {@link ApiError}. */
  async sendOk(path: string, options: SendOptions = {}): Promise<Response> {
    const response = await this.send(path, options);
    if (!response.ok) throw await errorFromResponse(response);
    return response;
  }

  /** A JSON business call answering `ok(data)`; returns `data` parsed by `schema`. */
  async json<S extends z.ZodType>(schema: S, path: string, options: SendOptions = {}): Promise<{ data: z.output<S>; response: Response }> {
    const response = await this.sendOk(path, withAccept(options));
    const envelope = await readJson(response, okEnvelope);
    const parsed = schema.safeParse(envelope.data);
    if (!parsed.success) throw shapeError(response.status, parsed.error);
    return { data: parsed.data, response };
  }

  /** A business call answering a raw (unwrapped) JSON body parsed by `schema`. */
  async raw<S extends z.ZodType>(schema: S, path: string, options: SendOptions = {}): Promise<z.output<S>> {
    return readJson(await this.sendOk(path, withAccept(options)), schema);
  }
}

function withAccept(options: SendOptions): SendOptions {
  return { ...options, headers: { accept: "application/json", ...options.headers } };
}

/** JSON body of a request. */
export function jsonInit(method: string, body: unknown): SendOptions {
  return { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
}

/** Reads and validates a JSON body; a body of another shape is an `invalid_response` error. */
export async function readJson<S extends z.ZodType>(response: Response, schema: S): Promise<z.output<S>> {
  let json: unknown;
  try {
    json = await response.json();
  } catch (cause) {
    throw new ApiError(response.status, "invalid_response", "the service answered with a body that is not JSON", { cause });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw shapeError(response.status, parsed.error);
  return parsed.data;
}

/** The `ok(data)` envelope around any data; `data` is then checked with the route's own schema. */
const okEnvelope = okSchema(z.unknown());

function shapeError(status: number, error: z.ZodError): ApiError {
  const issue = error.issues[0];
  const where = issue?.path.length ? ` at ${issue.path.join(".")}` : "";
  return new ApiError(status, "invalid_response", `unexpected response shape${where}: ${issue?.message ?? "invalid"}`, { cause: error });
}
