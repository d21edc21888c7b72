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
