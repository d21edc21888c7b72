import { randomBytes } from "node:crypto";
import { AUTH_BASE_PATH, errorEnvelopeSchema, SET_AUTH_JWT_HEADER } from "@app/contracts";

/** What the doctor talks to and as whom. */
export interface ProbeOptions {
  baseUrl: string;
  /** Credentials of an existing user; without them a throwaway user is signed up. */
  email?: string | undefined;
  password?: string | undefined;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** A response reduced to what the checks look at. */
export interface Answer {
  status: number;
  headers: Headers;
  body: string;
  /** The error envelope's code, when the body is one. */
  code: string | undefined;
}

/** The outcome of the sign-in + get-session round trip. */
export interface RoundTrip {
  /** `name=value` of the session cookie(s), for the cookie-only checks. */
  cookie: string | undefined;
  jwt: string | undefined;
  userId: string | undefined;
  /** Set when the round trip signed up a throwaway user. */
  throwawayEmail: string | undefined;
  /** Which step failed and how, when it did. */
  problem: string | undefined;
}

function codeOf(body: string): string | undefined {
  try {
    const parsed = errorEnvelopeSchema.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data.error.code : undefined;
  } catch {
    return undefined;
  }
}

/** HTTP access to the service with timeouts, error codes and the session cookie of one round trip. */
export class HttpProbe {
  readonly baseUrl: string;
  readonly #options: ProbeOptions;
  readonly #fetch: typeof fetch;

  constructor(options: ProbeOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#options = options;
    this.#fetch = options.fetch ?? fetch;
  }

  /** One request; network failures come back as status 0 with the reason as body. */
  async call(path: string, init: RequestInit = {}): Promise<Answer> {
    try {
      const res = await this.#fetch(`${this.baseUrl}${path}`, {
        redirect: "manual",
        ...init,
        signal: AbortSignal.timeout(this.#options.timeoutMs ?? 10_000),
      });
      const body = await res.text();
      return { status: res.status, headers: res.headers, body, code: codeOf(body) };
    } catch (error) {
      const cause = (error as Error & { cause?: { code?: string } }).cause?.code;
      return { status: 0, headers: new Headers(), body: `${(error as Error).message}${cause ? ` (${cause})` : ""}`, code: undefined };
    }
  }

  /** POST JSON to the identity area. */
  postAuth(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    return this.call(`${AUTH_BASE_PATH}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", ...headers },
      body: JSON.stringify(body),
    });
  }

  /**
   * The contract's two-step login, as a client must do it: sign-in (signing up a throwaway
   * `doctor+<random>@example.invalid` user first when no credentials were given), then get-session
   * with the cookie, whose `set-auth-jwt` header is the JWT.
   */
  async roundTrip(): Promise<RoundTrip> {
    const out: RoundTrip = { cookie: undefined, jwt: undefined, userId: undefined, throwawayEmail: undefined, problem: undefined };
    let { email, password } = this.#options;
    if (!email || !password) {
      email = `doctor+${randomBytes(6).toString("hex")}@example.invalid`;
      password = randomBytes(18).toString("base64url");
      const up = await this.postAuth("/sign-up/email", { email, password, name: "doctor" });
      if (up.status !== 200) {
        out.problem = `sign-up of a throwaway user answered ${describe(up)}`;
        return out;
      }
      out.throwawayEmail = email;
    }
    const signIn = await this.postAuth("/sign-in/email", { email, password });
    if (signIn.status !== 200) {
      out.problem = `sign-in answered ${describe(signIn)}`;
      return out;
    }
    if (signIn.headers.get(SET_AUTH_JWT_HEADER)) {
      out.problem = "sign-in itself carried set-auth-jwt (the contract issues the JWT only on get-session)";
    }
    const cookies = signIn.headers.getSetCookie().map((line) => line.split(";")[0] ?? "");
    out.cookie = cookies.filter((c) => c.includes("=")).join("; ") || undefined;
    if (!out.cookie) {
      out.problem = "sign-in answered 200 without a Set-Cookie session cookie";
      return out;
    }
    const session = await this.call(`${AUTH_BASE_PATH}/get-session`, { method: "POST", headers: { cookie: out.cookie } });
    if (session.status !== 200) {
      out.problem = `get-session with the new cookie answered ${describe(session)}`;
      return out;
    }
    out.jwt = session.headers.get(SET_AUTH_JWT_HEADER) ?? undefined;
    try {
      out.userId = (JSON.parse(session.body) as { user?: { id?: string } }).user?.id;
    } catch {
      out.userId = undefined;
    }
    if (!out.jwt) out.problem ??= "get-session answered 200 without a set-auth-jwt header";
    return out;
  }

  /** Ends the round trip's session (best effort). */
  async signOut(cookie: string | undefined): Promise<void> {
    if (cookie) await this.call(`${AUTH_BASE_PATH}/sign-out`, { method: "POST", headers: { cookie } });
  }
}

/** `401 invalid_credentials`, `0 (connect ECONNREFUSED)` and the like. */
export function describe(answer: Answer): string {
  if (answer.status === 0) return `no answer: ${answer.body}`;
  return `${answer.status}${answer.code ? ` ${answer.code}` : ""}`;
}
