import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { WebSocket } from "ws";
import { type AppClient, createClient, type FetchLike, memoryStorage } from "../src/index.js";
import { cookieFetch, freshEmail, signUpSignedIn, startStack } from "./helpers.js";

// The SDK treats the cookie session as the truth for its own user (docs/web-app.md, "The SDK"):
// against a real stack, a session ended from another client ends this one at the next check.
let env: Awaited<ReturnType<typeof startStack>>;
/** A real server answering every request 503 in the envelope, as the gateway does with identity down. */
let unavailable: http.Server;
let unavailableUrl: string;
/** A port nothing listens on: a refused connection, as with identity unreachable. */
let closedUrl: string;

beforeAll(async () => {
  env = await startStack();
  unavailable = http.createServer((_req, res) => {
    res.writeHead(503, { "content-type": "application/json" });
    res.end(JSON.stringify({ ok: false, error: { code: "service_unavailable", message: "upstream down" } }));
  });
  await new Promise<void>((resolve) => unavailable.listen(0, "127.0.0.1", resolve));
  unavailableUrl = `http://127.0.0.1:${(unavailable.address() as AddressInfo).port}`;
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  closedUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
  await new Promise((resolve) => probe.close(resolve));
});
afterAll(async () => {
  await new Promise((resolve) => unavailable?.close(resolve));
  await env?.stop();
});

const PASSWORD = "correct horse battery";

/** Counts calls of a callback. */
function tally(): { count: number; hit(): void } {
  const t = {
    count: 0,
    hit() {
      t.count += 1;
    },
  };
  return t;
}
const webSocket = (url: string) => new WebSocket(url);

/**
 * One simulated browser: its own cookie jar and storage. `route` sends identity calls elsewhere
 * (`closedUrl`, `unavailableUrl`) while it is set, to stand for identity being unreachable.
 */
function browser(): { client: AppClient; route: { to: string | undefined }; calls: Map<string, number> } {
  const jar = cookieFetch();
  const route: { to: string | undefined } = { to: undefined };
  const fetch: FetchLike = (input, init) => {
    const url = new URL(input);
    return route.to && url.pathname.startsWith("/api/auth/") ? jar.fetch(`${route.to}${url.pathname}`, init) : jar.fetch(input, init);
  };
  return { client: createClient({ baseUrl: env.stack.baseUrl, storage: memoryStorage(), fetch, webSocket }), route, calls: jar.calls };
}

async function twoBrowsers(): Promise<{
  here: AppClient;
  there: AppClient;
  email: string;
  hereRoute: { to: string | undefined };
  hereCalls: Map<string, number>;
}> {
  const email = freshEmail("watch");
  const { client: there } = browser();
  await signUpSignedIn(there, { email, password: PASSWORD, name: "Watched" });
  const { client: here, route: hereRoute, calls: hereCalls } = browser();
  await here.auth.signIn({ email, password: PASSWORD });
  return { here, there, email, hereRoute, hereCalls };
}

describe("watchSession", () => {
  it("a session ended on another client ends here at the next check: JWT dropped, stream and socket closed, no more tasks", async () => {
    const { here, there } = await twoBrowsers();
    const task = await here.tasks.create({ title: "followed" });
    const jwt = here.auth.token();
    const stream = here.tasks.stream(task.id, { onEvent: () => undefined });
    const socketClosed = tally();
    const socket = await here.connectSocket({ onMessage: () => undefined, onClose: socketClosed.hit });
    socket.subscribe(task.id);
    const signedOut = tally();
    const stop = here.auth.watchSession({ intervalMs: 1_000, checkNow: false, onSignedOut: signedOut.hit });
    try {
      await there.auth.revokeOtherSessions();
      await vi.waitFor(() => expect(signedOut.count).toBe(1), { timeout: 10_000, interval: 50 });
      expect(here.auth.token()).toBeNull();
      await expect(stream.done).resolves.toBeUndefined();
      expect(socketClosed.count).toBe(1);
      await expect(here.tasks.create({ title: "after the end" })).rejects.toMatchObject({ status: 401 });
      // The contract keeps the JWT itself valid until it expires: only this client stopped using it.
      const me = await fetch(`${env.stack.baseUrl}/api/me`, { headers: { authorization: `Bearer ${jwt}` } });
      expect(me.status).toBe(200);
      expect(signedOut.count).toBe(1);
    } finally {
      stop();
    }
  });

  it("the window regaining focus checks at once", async () => {
    const { here, there } = await twoBrowsers();
    const events = new EventTarget();
    const signedOut = tally();
    const stop = here.auth.watchSession({ intervalMs: 3_600_000, checkNow: false, events, onSignedOut: signedOut.hit });
    try {
      await there.auth.revokeOtherSessions();
      events.dispatchEvent(new Event("focus"));
      await vi.waitFor(() => expect(signedOut.count).toBe(1), { timeout: 5_000, interval: 20 });
      expect(here.auth.token()).toBeNull();
    } finally {
      stop();
    }
  });

  it("another tab removing authToken checks at once; another tab storing a fresh one does not", async () => {
    const { here, there, hereCalls } = await twoBrowsers();
    const checks = () => hereCalls.get("/api/auth/get-session") ?? 0;
    const events = new EventTarget();
    const storage = (newValue: string | null) => Object.assign(new Event("storage"), { key: "authToken", newValue });
    const signedOut = tally();
    const stop = here.auth.watchSession({ intervalMs: 3_600_000, checkNow: false, events, onSignedOut: signedOut.hit });
    try {
      // A check sends its get-session synchronously from the event, so the count tells at once.
      const before = checks();
      events.dispatchEvent(storage("a.fresh.jwt"));
      expect(checks()).toBe(before);
      await there.auth.revokeOtherSessions();
      events.dispatchEvent(storage(null));
      expect(checks()).toBe(before + 1);
      await vi.waitFor(() => expect(signedOut.count).toBe(1), { timeout: 5_000, interval: 20 });
    } finally {
      stop();
    }
  });

  it("a check without a definite answer keeps the user signed in; only 'no session' signs out", async () => {
    const { here, there, hereRoute } = await twoBrowsers();
    const failures: string[] = [];
    const signedOut = tally();
    const stop = here.auth.watchSession({
      intervalMs: 1_000,
      checkNow: false,
      onSignedOut: signedOut.hit,
      onCheckFailed: (error) => failures.push(error.code),
    });
    try {
      await there.auth.revokeOtherSessions();
      hereRoute.to = closedUrl;
      await vi.waitFor(() => expect(failures).toContain("network_error"), { timeout: 10_000, interval: 50 });
      hereRoute.to = unavailableUrl;
      await vi.waitFor(() => expect(failures).toContain("service_unavailable"), { timeout: 10_000, interval: 50 });
      expect(signedOut.count).toBe(0);
      expect(here.auth.token()).not.toBeNull();
      hereRoute.to = undefined;
      await vi.waitFor(() => expect(signedOut.count).toBe(1), { timeout: 10_000, interval: 50 });
    } finally {
      stop();
    }
  });

  it("a call that finds the session gone ends it the same way, once; sign-out does not report it", async () => {
    const { here, there } = await twoBrowsers();
    const signedOut = tally();
    const stop = here.auth.watchSession({ intervalMs: 3_600_000, checkNow: false, onSignedOut: signedOut.hit });
    try {
      await there.auth.revokeOtherSessions();
      await expect(here.auth.listSessions()).rejects.toMatchObject({ status: 401, code: "unauthorized" });
      expect(signedOut.count).toBe(1);
      expect(here.auth.token()).toBeNull();
      expect(await here.auth.checkSession()).toEqual({ status: "signed_out" });
      expect(signedOut.count).toBe(1);
    } finally {
      stop();
    }

    const reported = tally();
    const stopThere = there.auth.watchSession({ intervalMs: 3_600_000, checkNow: false, onSignedOut: reported.hit });
    const task = await there.tasks.create({ title: "closed by sign-out" });
    const stream = there.tasks.stream(task.id, { onEvent: () => undefined });
    await there.auth.signOut();
    await expect(stream.done).resolves.toBeUndefined();
    expect(reported.count).toBe(0);
    stopThere();
  });

  it("a cookie that now belongs to another user signs this client's user out", async () => {
    const jar = cookieFetch();
    const first = createClient({ baseUrl: env.stack.baseUrl, storage: memoryStorage(), fetch: jar.fetch });
    const second = createClient({ baseUrl: env.stack.baseUrl, storage: memoryStorage(), fetch: jar.fetch });
    await signUpSignedIn(first, { email: freshEmail("first"), password: PASSWORD, name: "First" });
    await signUpSignedIn(second, { email: freshEmail("second"), password: PASSWORD, name: "Second" });
    expect(await first.auth.checkSession()).toEqual({ status: "signed_out" });
    expect(first.auth.token()).toBeNull();
    expect((await second.auth.checkSession()).status).toBe("signed_in");
  });

  it("update-user fetches a fresh JWT at once; a change made on another client reaches the JWT at the next check", async () => {
    const { here, there } = await twoBrowsers();
    await here.auth.updateUser({ name: "Renamed here" });
    expect((await here.me()).name).toBe("Renamed here");

    // The JWT is a snapshot (docs/accounts.md, "What a JWT keeps"): the other client's name, or a
    // confirmed address change, shows in its next JWT, which the next check brings.
    await there.auth.updateUser({ name: "Renamed there" });
    expect((await here.me()).name).toBe("Renamed here");
    expect((await here.auth.checkSession()).status).toBe("signed_in");
    expect((await here.me()).name).toBe("Renamed there");
  });
});
