import { describe, expect, it } from "vitest";
import { AuthVerifyError } from "./errors.js";
import { MAX_JWKS_BODY_CHARS, readJwksBody } from "./jwks-body.js";
import { type FetchLike, type KeySetRefreshEvent, RemoteKeySet } from "./remote-key-set.js";
import { expectCode, frozenClock, makeKey, type TestKey } from "./test-fixtures.js";

const URL_ = "https://auth.test/api/auth/jwks";

/** An injected fetch answering `body()` (JSON) and counting calls; `gate` can hold responses. */
function fakeFetch(body: () => unknown) {
  const state = { calls: 0, gate: undefined as Promise<void> | undefined, lastInit: undefined as RequestInit | undefined };
  const fetch: FetchLike = async (_url, init) => {
    state.calls += 1;
    state.lastInit = init;
    if (state.gate) await state.gate;
    const value = body();
    if (value instanceof Error) throw value;
    return new Response(JSON.stringify(value), { status: 200, headers: { "content-type": "application/json" } });
  };
  return { fetch, state };
}

let k1: TestKey;
let k2: TestKey;
const ready = Promise.all([makeKey("k1"), makeKey("k2")]).then(([a, b]) => {
  k1 = a;
  k2 = b;
});

describe("RemoteKeySet", () => {
  it("does not fetch at construction and imports each kid once", async () => {
    await ready;
    const { fetch, state } = fakeFetch(() => ({ keys: [k1.publicJwk] }));
    const clock = frozenClock();
    const set = new RemoteKeySet({ url: URL_, fetch, now: clock.now });
    expect(state.calls).toBe(0);
    const a = await set.getKey("k1");
    clock.advance(10 * 60_000);
    const b = await set.getKey("k1");
    expect(state.calls).toBe(2);
    expect(b).toBe(a);
    expect(state.lastInit?.signal).toBeInstanceOf(AbortSignal);
  });

  it("ignores keys that are not Ed25519 signature keys", async () => {
    await ready;
    const { x } = k2.publicJwk;
    const keys = [
      { kty: "RSA", kid: "rsa", n: "AQAB", e: "AQAB" },
      { kty: "OKP", crv: "X25519", kid: "x25519", x },
      { kty: "OKP", crv: "Ed25519", kid: "enc", x, use: "enc" },
      { kty: "OKP", crv: "Ed25519", kid: "es", x, alg: "ES256" },
      { kty: "OKP", crv: "Ed25519", kid: "ops", x, key_ops: ["sign"] },
      { kty: "OKP", crv: "Ed25519", kid: 7, x },
      { kty: "OKP", crv: "Ed25519", kid: "badx", x: "AAAA" },
      { kty: "OKP", crv: "Ed25519", x },
      "junk",
      null,
      { kty: "OKP", crv: "Ed25519", kid: "nouse", x },
      k1.publicJwk,
      { ...k2.publicJwk, kid: "k1" }, // duplicate kid: the first one wins
    ];
    const { fetch } = fakeFetch(() => ({ keys }));
    const set = new RemoteKeySet({ url: URL_, fetch, now: frozenClock().now });
    await set.getKey("k1");
    expect(set.kids().sort()).toEqual(["k1", "nouse"]);
    for (const kid of ["rsa", "x25519", "enc", "es", "ops", "badx"]) await expectCode(set.getKey(kid), "unknown_key");
  });

  it("treats a set without any usable key as a failure and keeps the previous one", async () => {
    await ready;
    let keys: unknown[] = [k1.publicJwk];
    const { fetch } = fakeFetch(() => ({ keys }));
    const clock = frozenClock();
    const set = new RemoteKeySet({ url: URL_, fetch, now: clock.now });
    await set.getKey("k1");
    keys = [];
    await expectCode(set.reload(), "jwks_unavailable");
    expect(set.kids()).toEqual(["k1"]);
    expect(set.stats()).toMatchObject({ fetches: 2, failures: 1, keys: 1 });
    const empty = new RemoteKeySet({ url: URL_, fetch, now: clock.now });
    await expectCode(empty.getKey("k1"), "jwks_unavailable");
  });

  it("shares one in-flight fetch between concurrent callers", async () => {
    await ready;
    const { fetch, state } = fakeFetch(() => ({ keys: [k1.publicJwk] }));
    let open = (): void => {};
    state.gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const set = new RemoteKeySet({ url: URL_, fetch, now: frozenClock().now });
    const pending = Array.from({ length: 100 }, (_, i) => set.getKey(i % 2 ? "k1" : "nope").catch((e: unknown) => e));
    await new Promise((r) => setTimeout(r, 10));
    expect(state.calls).toBe(1);
    open();
    const results = await Promise.all(pending);
    expect(results.filter((r) => r instanceof AuthVerifyError && r.code === "unknown_key")).toHaveLength(50);
    expect(state.calls).toBe(1);
  });

  it("reports dropped and changed kids to refresh listeners, and survives a throwing listener", async () => {
    await ready;
    let keys: unknown[] = [k1.publicJwk, k2.publicJwk];
    const { fetch } = fakeFetch(() => ({ keys }));
    const events: KeySetRefreshEvent[] = [];
    const set = new RemoteKeySet({ url: URL_, fetch, now: frozenClock().now, onRefresh: (e) => events.push(e) });
    set.onRefresh(() => {
      throw new Error("listener bug");
    });
    await set.getKey("k1");
    const k3 = await makeKey("k3");
    keys = [{ ...k3.publicJwk, kid: "k2" }, k3.publicJwk];
    await set.reload();
    expect(events).toEqual([
      { kids: ["k1", "k2"], droppedKids: [] },
      { kids: ["k2", "k3"], droppedKids: ["k1", "k2"] },
    ]);
  });

  it("fails fetches that are not 2xx, and retries only after the cooldown", async () => {
    let calls = 0;
    const fetch: FetchLike = async () => {
      calls += 1;
      return new Response("nope", { status: 404 });
    };
    const clock = frozenClock();
    const set = new RemoteKeySet({ url: URL_, fetch, now: clock.now, cooldownMs: 5_000 });
    await expectCode(set.getKey("k1"), "jwks_unavailable");
    await expectCode(set.getKey("k1"), "jwks_unavailable");
    expect(calls).toBe(1);
    clock.advance(5_000);
    await expectCode(set.getKey("k1"), "jwks_unavailable");
    expect(calls).toBe(2);
  });

  it("refuses oversized bodies and aborts on close", async () => {
    await ready;
    const big = { keys: [k1.publicJwk], pad: "x".repeat(1_000_001) };
    const { fetch } = fakeFetch(() => big);
    await expectCode(new RemoteKeySet({ url: URL_, fetch }).getKey("k1"), "jwks_unavailable");

    const hanging: FetchLike = (_url, init) =>
      new Promise((_resolve, reject) => init.signal?.addEventListener("abort", () => reject(new Error("aborted"))));
    const set = new RemoteKeySet({ url: URL_, fetch: hanging });
    const pending = set.getKey("k1");
    set.close();
    await expectCode(pending, "jwks_unavailable");
    await expectCode(set.getKey("k1"), "jwks_unavailable");
  });

  it("stops reading a key set body past the limit, so an endless body cannot fill memory", async () => {
    await ready;
    let pulled = 0;
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
      },
      cancel() {
        cancelled = true;
      },
    });
    const fetch: FetchLike = async () => new Response(endless, { status: 200 });
    const set = new RemoteKeySet({ url: URL_, fetch });
    const error = await expectCode(set.getKey("k1"), "jwks_unavailable");
    expect(cancelled).toBe(true);
    expect(pulled * 64 * 1024).toBeLessThan(2 * MAX_JWKS_BODY_CHARS);
    expect(String((error.cause as Error | undefined)?.message)).toContain("too large");
  });

  it("refuses a declared Content-Length over the limit without reading, and a body that is not UTF-8", async () => {
    await ready;
    let read = false;
    const body = new ReadableStream<Uint8Array>(
      {
        pull() {
          read = true;
        },
      },
      { highWaterMark: 0 }, // pulled only when someone reads
    );
    const declared: FetchLike = async () =>
      new Response(body, { status: 200, headers: { "content-length": String(MAX_JWKS_BODY_CHARS + 1) } });
    await expectCode(new RemoteKeySet({ url: URL_, fetch: declared }).getKey("k1"), "jwks_unavailable");
    expect(read).toBe(false);
    expect(await readJwksBody(new Response('{"keys":[]}'))).toBe('{"keys":[]}');
    await expect(readJwksBody(new Response(new Uint8Array([0x7b, 0xff, 0x7d])))).rejects.toThrow("not UTF-8");
  });

  it("rejects bad options", () => {
    expect(() => new RemoteKeySet({ url: "file:///etc/jwks" })).toThrow(TypeError);
    expect(() => new RemoteKeySet({ url: URL_, cooldownMs: -1 })).toThrow(TypeError);
    expect(() => new RemoteKeySet({ url: URL_, cacheMaxAgeMs: 0 })).toThrow(TypeError);
    expect(() => new RemoteKeySet({ url: URL_, fetchTimeoutMs: Number.NaN })).toThrow(TypeError);
  });
});
