import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { type KeySetRefreshEvent, RemoteKeySet } from "./remote-key-set.js";
import { claims, expectCode, frozenClock, makeKey, mint, T0_SEC, type TestKey } from "./test-fixtures.js";
import { createVerifier } from "./verify.js";

// refreshNow is the push hook (a key-change announcement makes each API instance fetch at once):
// it ignores the cooldown, never joins a fetch that may have left before the change, and costs at
// most one fetch in flight plus one queued however often it is called. Real HTTP on 127.0.0.1.

interface HeldServer {
  url: string;
  /** Requests received. */
  hits(): number;
  /** What the next answers publish. */
  publish(keys: unknown[]): void;
  /** Holds answers until released (the request is counted on arrival). */
  hold(): void;
  release(): void;
  /** Answers 500 from now on. */
  fail(): void;
  close(): Promise<void>;
}

async function startServer(keys: unknown[]): Promise<HeldServer> {
  let published = keys;
  let hits = 0;
  let failing = false;
  let gate: Promise<void> | undefined;
  let open: () => void = () => {};
  const server = createServer((_req: IncomingMessage, res: ServerResponse) => {
    hits += 1;
    const answer = () => {
      if (failing) res.writeHead(500).end("down");
      else res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: published }));
    };
    // The body is what is published when the answer leaves, as a real endpoint would read it.
    if (gate) void gate.then(answer);
    else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/auth/jwks`,
    hits: () => hits,
    publish: (next) => {
      published = next;
    },
    hold: () => {
      gate = new Promise((resolve) => {
        open = resolve;
      });
    },
    release: () => {
      gate = undefined;
      open();
    },
    fail: () => {
      failing = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let k1: TestKey;
let k2: TestKey;
let server: HeldServer;
const closers: Array<() => void> = [];

beforeAll(async () => {
  [k1, k2] = await Promise.all([makeKey("k1"), makeKey("k2")]);
});
afterEach(async () => {
  for (const close of closers.splice(0)) close();
  await server.close();
});

function keySet(): RemoteKeySet {
  const set = new RemoteKeySet({ url: server.url, now: frozenClock().now });
  closers.push(() => set.close());
  return set;
}

/** Resolves once `count` requests reached the server. */
async function arrived(count: number): Promise<void> {
  while (server.hits() < count) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe("RemoteKeySet.refreshNow", () => {
  it("fetches at once inside the cooldown, drops vanished kids and makes new ones usable", async () => {
    server = await startServer([k1.publicJwk]);
    const set = keySet();
    const events: KeySetRefreshEvent[] = [];
    set.onRefresh((event) => events.push(event));
    await set.getKey("k1");
    server.publish([k2.publicJwk]);
    await set.refreshNow();
    expect(server.hits()).toBe(2);
    expect(set.kids()).toEqual(["k2"]);
    expect(events.at(-1)).toEqual({ kids: ["k2"], droppedKids: ["k1"] });
    expect(set.peekKey("k2")).toBeDefined();
    await expectCode(set.getKey("k1"), "unknown_key");
  });

  it("coalesces calls of one turn into one fetch", async () => {
    server = await startServer([k1.publicJwk]);
    const set = keySet();
    await Promise.all(Array.from({ length: 20 }, () => set.refreshNow()));
    expect(server.hits()).toBe(1);
    expect(set.kids()).toEqual(["k1"]);
  });

  it("queues one fetch behind a fetch in flight, shared by every call made meanwhile", async () => {
    server = await startServer([k1.publicJwk]);
    const set = keySet();
    server.hold();
    const first = set.getKey("k1");
    await arrived(1);
    // The change lands after the fetch in flight left: joining it would miss the change.
    server.publish([k1.publicJwk, k2.publicJwk]);
    const calls = Array.from({ length: 50 }, () => set.refreshNow());
    server.release();
    await Promise.all([first, ...calls]);
    expect(server.hits()).toBe(2);
    expect(set.kids().sort()).toEqual(["k1", "k2"]);
    expect(set.stats().fetches).toBe(2);
  });

  it("keeps the current set and rejects with jwks_unavailable when the fetch fails", async () => {
    server = await startServer([k1.publicJwk]);
    const set = keySet();
    const before = await set.getKey("k1");
    server.fail();
    await expectCode(set.refreshNow(), "jwks_unavailable");
    expect(set.kids()).toEqual(["k1"]);
    expect(await set.getKey("k1")).toBe(before);
    expect(set.stats()).toMatchObject({ fetches: 2, failures: 1, keys: 1 });
  });

  it("rejects with jwks_unavailable once the set is closed, without fetching", async () => {
    server = await startServer([k1.publicJwk]);
    const set = keySet();
    set.close();
    await expectCode(set.refreshNow(), "jwks_unavailable");
    expect(server.hits()).toBe(0);
  });

  it("lets a verifier refuse cached tokens of a retired kid and accept a new kid at once", async () => {
    server = await startServer([k1.publicJwk]);
    const clock = frozenClock();
    const v = createVerifier({ jwksUrl: server.url, now: clock.now });
    closers.push(() => v.close());
    const old = await mint(k1, claims({ iat: T0_SEC, exp: T0_SEC + 3600 }));
    await v.verifyToken(old);
    await v.verifyToken(old);
    expect(v.stats().cache.size).toBe(1);
    server.publish([k2.publicJwk]);
    await v.keySet.refreshNow();
    expect(v.stats().cache.size).toBe(0);
    await expectCode(v.verifyToken(old), "unknown_key", old);
    const fresh = await mint(k2, claims({ iat: T0_SEC, exp: T0_SEC + 3600 }));
    expect((await v.verifyToken(fresh)).kid).toBe("k2");
    expect(server.hits()).toBe(2);
  });
});
