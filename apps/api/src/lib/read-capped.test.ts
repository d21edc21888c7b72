import { describe, expect, it } from "vitest";
import { readJsonCapped } from "./read-capped.js";

const streamOf = (chunks: string[]) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const c of chunks) controller.enqueue(new TextEncoder().encode(c));
      controller.close();
    },
  });

describe("readJsonCapped", () => {
  it("reads JSON within the cap", async () => {
    expect(await readJsonCapped(new Response('{"access_token":"a"}'), 100)).toEqual({ access_token: "a" });
  });

  it("gives undefined for a body over the cap, declared or streamed, and for non-JSON", async () => {
    expect(await readJsonCapped(new Response("x".repeat(101), { headers: { "content-length": "101" } }), 100)).toBeUndefined();
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
      },
    });
    expect(await readJsonCapped(new Response(endless), 100_000)).toBeUndefined();
    expect(pulled).toBeLessThan(10);
    expect(await readJsonCapped(new Response(streamOf(["{", '"a":', "1}"])), 100)).toEqual({ a: 1 });
    expect(await readJsonCapped(new Response("<html>"), 100)).toBeUndefined();
    expect(await readJsonCapped(new Response(null), 100)).toBeUndefined();
  });
});
