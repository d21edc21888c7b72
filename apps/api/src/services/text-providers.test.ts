import { describe, expect, it } from "vitest";
import { LocalTextProvider } from "./text-providers.js";

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
