import { AUTH_TOKEN_STORAGE_KEY, SET_AUTH_JWT_HEADER } from "@app/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, memoryStorage } from "../src/index.js";
import { cookieFetch, freshEmail, signUpSignedIn, startStack } from "./helpers.js";

// The SDK's answer to a 401 from the API: one get-session, one more try with the fresh JWT, never
// a loop, and never as another user. With JWT_EXPIRES_IN an operator makes JWTs short-lived
// (at least a minute), so a page open for longer meets an expired one on its next call.
const PASSWORD = "correct horse battery";
/** The shortest JWT_EXPIRES_IN identity accepts (packages/http-kit/src/settings/token.ts). */
const JWT_SECONDS = 60;
let env: Awaited<ReturnType<typeof startStack>>;
beforeAll(async () => {
  env = await startStack({ JWT_EXPIRES_IN: `${JWT_SECONDS}s` });
});
afterAll(async () => {
  await env?.stop();
});

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

/** What GET /api/me answers for `token`, sent as it is. */
async function meStatus(token: string): Promise<number> {
  const response = await fetch(`${env.stack.baseUrl}/api/me`, { headers: { authorization: `Bearer ${token}` } });
  await response.body?.cancel();
  return response.status;
}

describe("401 from the API: refresh once", () => {
  it(
    "an expired JWT is replaced through get-session and the call goes through, with one refresh and one retry",
    async () => {
      const jar = cookieFetch();
      const storage = memoryStorage();
      const client = createClient({ baseUrl: env.stack.baseUrl, storage, fetch: jar.fetch });
      const { token } = await signUpSignedIn(client, { email: freshEmail("expiry"), password: PASSWORD, name: "Expiry Test" });
      const { exp, iat } = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString()) as { exp: number; iat: number };
      expect(exp - iat).toBe(JWT_SECONDS);
      // Wait (polling the API itself) until the JWT is refused.
      const deadline = Date.now() + (JWT_SECONDS + 30) * 1000;
      while ((await meStatus(token)) !== 401) {
        if (Date.now() > deadline) throw new Error("the JWT was never refused");
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      const sessions = jar.calls.get("/api/auth/get-session") ?? 0;
      const mes = jar.calls.get("/api/me") ?? 0;
      expect((await client.me()).email).toMatch(/^expiry-/);
      expect(jar.calls.get("/api/auth/get-session")).toBe(sessions + 1);
      expect(jar.calls.get("/api/me")).toBe(mes + 2);
      const fresh = storage.getItem(AUTH_TOKEN_STORAGE_KEY) ?? "";
      expect(fresh).not.toBe(token);
      expect(await meStatus(fresh)).toBe(200);
    },
    (JWT_SECONDS + 60) * 1000,
  );

  it("a JWT the API refuses again after the refresh is not retried a second time: the 401 stands and the session ends", async () => {
    const calls = { session: 0, api: 0 };
    const fetch = async (input: string): Promise<Response> => {
      if (input.endsWith("/api/auth/get-session")) {
        calls.session += 1;
        const at = "2026-11-21T00:00:00.000Z";
        const user = { id: "u", email: "e@example.com", name: "n", emailVerified: true, createdAt: at, updatedAt: at };
        return json(
          200,
          { session: { id: "s", userId: "u", expiresAt: at, createdAt: at }, user },
          { [SET_AUTH_JWT_HEADER]: `fresh.${calls.session}.jwt` },
        );
      }
      calls.api += 1;
      return json(401, { ok: false, error: { code: "token_expired", message: "expired" } });
    };
    const storage = memoryStorage({ [AUTH_TOKEN_STORAGE_KEY]: "stale.jwt.token" });
    const client = createClient({ baseUrl: "http://service.test", storage, fetch });
    const ended: string[] = [];
    client.auth.watchSession({ checkNow: false, events: undefined, onSignedOut: () => ended.push("ended") });
    await expect(client.tasks.list()).rejects.toMatchObject({ status: 401, code: "token_expired" });
    expect(calls).toEqual({ session: 1, api: 2 });
    expect(storage.getItem(AUTH_TOKEN_STORAGE_KEY)).toBeNull();
    expect(ended).toEqual(["ended"]);
  });

  it("after the cookie changed hands (another user signed in in this browser), a refused call is not sent again as that user", async () => {
    // Two tabs of one browser: one cookie jar, a store each.
    const jar = cookieFetch();
    const store = memoryStorage();
    const tab = createClient({ baseUrl: env.stack.baseUrl, storage: store, fetch: jar.fetch });
    await signUpSignedIn(tab, { email: freshEmail("first"), password: PASSWORD, name: "First" });
    const other = createClient({ baseUrl: env.stack.baseUrl, storage: memoryStorage(), fetch: jar.fetch });
    await signUpSignedIn(other, { email: freshEmail("second"), password: PASSWORD, name: "Second" });
    await other.tasks.create({ title: "second's task" });
    // The first tab's JWT is refused (as an expired one is); get-session now answers for the second user.
    store.setItem(AUTH_TOKEN_STORAGE_KEY, `${tab.auth.token() ?? ""}x`);
    const tasks = jar.calls.get("/api/tasks") ?? 0;
    await expect(tab.tasks.list()).rejects.toMatchObject({ status: 401 });
    expect(jar.calls.get("/api/tasks")).toBe(tasks + 1);
    expect(store.getItem(AUTH_TOKEN_STORAGE_KEY)).toBeNull();
  });
});
