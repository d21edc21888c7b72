import { AUTH_TOKEN_STORAGE_KEY, SET_AUTH_JWT_HEADER } from "@app/contracts";
import { describe, expect, it } from "vitest";
import { createClient, memoryStorage } from "../src/index.js";

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

describe("401 refresh", () => {
  it("does not refresh again for a 401 that arrives after another call already refreshed", async () => {
    let sessions = 0;
    let releaseSecond: () => void = () => undefined;
    const secondHeld = new Promise<void>((resolve) => {
      releaseSecond = resolve;
    });
    let stale = 0;
    const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const url = String(input);
      const auth = new Headers(init?.headers).get("authorization");
      if (url.endsWith("/api/auth/get-session")) {
        sessions += 1;
        const at = "2026-11-21T00:00:00.000Z";
        const session = { id: "s", userId: "u", expiresAt: at, createdAt: at };
        const user = { id: "u", email: "e@example.com", name: "n", emailVerified: false, createdAt: at, updatedAt: at };
        return json(200, { session, user }, { [SET_AUTH_JWT_HEADER]: "fresh.jwt.token" });
      }
      if (auth === "Bearer fresh.jwt.token") return json(200, { ok: true, data: { id: "u", email: "e", name: "n" } });
      stale += 1;
      // The second stale call's 401 is held back until the first call has refreshed and retried.
      if (stale === 2) await secondHeld;
      return json(401, { ok: false, error: { code: "invalid_signature", message: "bad" } });
    };
    const storage = memoryStorage({ [AUTH_TOKEN_STORAGE_KEY]: "stale.jwt.token" });
    const client = createClient({ baseUrl: "http://service.test", storage, fetch });
    const first = client.me();
    const second = client.me();
    await first;
    releaseSecond();
    await second;
    expect(sessions).toBe(1);
    expect(storage.getItem(AUTH_TOKEN_STORAGE_KEY)).toBe("fresh.jwt.token");
  });
});

describe("a user switch of this client (impersonation) during a session check", () => {
  it("does not take the check's answer, sent before the switch, for the new user's, nor end the session over it", async () => {
    const at = "2026-11-21T00:00:00.000Z";
    const user = (id: string) => ({ id, email: `${id}@example.com`, name: id, emailVerified: true, createdAt: at, updatedAt: at });
    const session = (id: string, impersonatedBy: string | null) => ({
      id: `s-${id}`,
      userId: id,
      expiresAt: at,
      createdAt: at,
      impersonatedBy,
    });
    let cookieUser = "admin";
    let hold: Promise<void> | undefined;
    let release: () => void = () => undefined;
    const fetch = async (input: string | URL | Request): Promise<Response> => {
      const url = String(input);
      if (url.endsWith("/api/auth/get-session")) {
        // The answer is of the cookie as the request left, even when it arrives later.
        const id = cookieUser;
        const gate = hold;
        hold = undefined;
        await gate;
        return json(
          200,
          { session: session(id, id === "admin" ? null : "admin"), user: user(id) },
          { [SET_AUTH_JWT_HEADER]: `jwt.of.${id}` },
        );
      }
      if (url.endsWith("/api/auth/admin/impersonate-user")) {
        cookieUser = "target";
        const row = { ...session("target", "admin"), token: "s-target", updatedAt: at, ipAddress: null, userAgent: null };
        const managed = { ...user("target"), role: "user", banned: false, banReason: null, banExpires: null };
        return json(200, { session: row, user: managed });
      }
      return json(404, { ok: false, error: { code: "not_found", message: "no" } });
    };
    const storage = memoryStorage();
    const client = createClient({ baseUrl: "http://service.test", storage, fetch });
    expect((await client.auth.getSession())?.user.id).toBe("admin");
    const ended: string[] = [];
    client.auth.watchSession({ checkNow: false, events: undefined, onSignedOut: () => ended.push("ended") });

    hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    const check = client.auth.checkSession(); // its get-session leaves now and is held
    const acting = await client.auth.admin.impersonateUser({ userId: "target" });
    expect(acting.user.id).toBe("target");
    expect(storage.getItem(AUTH_TOKEN_STORAGE_KEY)).toBe("jwt.of.target");
    release();
    expect((await check).status).not.toBe("signed_out");
    expect(storage.getItem(AUTH_TOKEN_STORAGE_KEY)).toBe("jwt.of.target");
    expect(ended).toEqual([]);
    expect((await client.auth.checkSession()).status).toBe("signed_in");
  });
});
