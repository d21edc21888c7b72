import { describe, expect, it } from "vitest";
import { LocalTextProvider, MAX_PROVIDER_EVENT_CHARS, OpenAiCompatibleProvider } from "./text-providers.js";

async function collect(it: AsyncIterable<{ type: string; text?: string }>) {
  const out: Array<{ type: string; text?: string }> = [];
  for await (const c of it) out.push(c);
  return out;
}

describe("LocalTextProvider", () => {
  it("is deterministic and streams word by word", async () => {
    const p = new LocalTextProvider();
    const a = await collect(p.generate({ prompt: "one two", maxTokens: 10 }, new AbortController().signal));
    const b = await collect(p.generate({ prompt: "one two", maxTokens: 10 }, new AbortController().signal));
    expect(a).toEqual(b);
    expect(a.map((c) => c.text ?? "").join("")).toBe("Local echo: one two");
    expect(a.at(-1)).toEqual({ type: "done", finishReason: "stop" });
  });

  it("stops when aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const out = await collect(new LocalTextProvider().generate({ prompt: "a b c", maxTokens: 10 }, controller.signal));
    expect(out.filter((c) => c.type === "delta")).toHaveLength(0);
  });
});

describe("OpenAiCompatibleProvider", () => {
  it("refuses an upstream event that never ends instead of buffering it without bound", async () => {
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new TextEncoder().encode(`data: ${"x".repeat(64 * 1024)}`));
      },
    });
    const provider = new OpenAiCompatibleProvider({
      baseUrl: "http://provider.invalid",
      apiKey: undefined,
      model: "m",
      fetch: async () => new Response(endless, { status: 200 }),
    });
    await expect(collect(provider.generate({ prompt: "p", maxTokens: 1 }, new AbortController().signal))).rejects.toMatchObject({
      code: "service_unavailable",
    });
    expect(pulled * 64 * 1024).toBeLessThan(MAX_PROVIDER_EVENT_CHARS * 2);
  });
});
