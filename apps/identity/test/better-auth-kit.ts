import type { RequestListener } from "node:http";
import { type BetterAuthClientPlugin, createAuthClient } from "better-auth/client";
import { parseSetCookie } from "set-cookie-parser";
import { afterAll, beforeAll } from "vitest";
import { type Served, serve } from "./oidc-kit.js";

// better-auth's official client, unchanged, against a real identity listening on a free port. The
// tests run in Node, so a cookie jar stands in for each browser.

/** A fetch that keeps cookies like one browser (set-cookie-parser reads Set-Cookie). */
export function cookieJarFetch() {
  const jar = new Map<string, string>();
  const jarFetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const headers = new Headers(init.headers);
    if (jar.size) headers.set("cookie", [...jar].map(([k, v]) => `${k}=${v}`).join("; "));
    const response = await fetch(input, { ...init, headers });
    for (const cookie of parseSetCookie(response.headers.getSetCookie())) {
      const expired = (cookie.expires && cookie.expires.getTime() <= Date.now()) || cookie.maxAge === 0;
      if (!cookie.value || expired) jar.delete(cookie.name);
      else jar.set(cookie.name, cookie.value);
    }
    return response;
  };
  return { fetch: jarFetch, jar };
}

/**
 * Serves the app `start` builds on a free loopback port before this file's tests, and stops the
 * server, then the app, after them. `browser` and `open` are for use inside the tests.
 */
export function betterAuthServer(start: () => Promise<{ app: RequestListener; close(): Promise<void> }>) {
  let started: { close(): Promise<void> } | undefined;
  let served: Served | undefined;
  beforeAll(async () => {
    const kit = await start();
    started = kit;
    served = await serve(kit.app);
  });
  afterAll(async () => {
    await served?.close();
    await started?.close();
  });
  const baseURL = () => {
    if (!served) throw new Error("better-auth-kit: the server starts in beforeAll");
    return served.baseUrl;
  };

  /** A better-auth client with `plugins` and its own cookie jar (one simulated browser). */
  function browser<const P extends BetterAuthClientPlugin[]>(plugins: P) {
    const { fetch: customFetchImpl, jar } = cookieJarFetch();
    const client = createAuthClient({ baseURL: baseURL(), plugins, fetchOptions: { customFetchImpl } });
    return { client, jar, fetch: customFetchImpl };
  }

  /** Opens a mailed link on this server (its path and query), as a click would, without following redirects. */
  function open(b: { fetch: (input: string, init: RequestInit) => Promise<Response> }, link: string) {
    const url = new URL(link);
    return b.fetch(`${baseURL()}${url.pathname}${url.search}`, { redirect: "manual" });
  }

  return { browser, open };
}

/** The part of a better-auth client that reads the session. */
interface SessionReader<T> {
  getSession(options: { fetchOptions: { onSuccess: (ctx: { response: Response }) => void } }): Promise<T>;
}

/** get-session through a browser's client, with the JWT of its `set-auth-jwt` header. */
export async function sessionWithJwt<T>(b: { client: SessionReader<T> }): Promise<{ session: T; jwt: string | null }> {
  let jwt: string | null = null;
  const session = await b.client.getSession({
    fetchOptions: {
      onSuccess: (ctx) => {
        jwt = ctx.response.headers.get("set-auth-jwt");
      },
    },
  });
  return { session, jwt };
}
