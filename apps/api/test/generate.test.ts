import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GenerateChunk, GenerateInput, TextProvider } from "../src/generate/text-providers.js";
import { eventually, readSse, startTestApi, type TestApi } from "./helpers.js";

/** A fake OpenAI-compatible server streaming two deltas. */
function fakeOpenAi(): Promise<{ url: string; server: Server; requests: Array<Record<string, unknown>> }> {
  const requests: Array<Record<string, unknown>> = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += String(c);
    });
    req.on("end", () => {
      requests.push({ ...(JSON.parse(body) as Record<string, unknown>), authorization: req.headers.authorization, path: req.url });
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const text of ["Hel", "lo"]) res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: text } }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ choices: [{ delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`);
      res.end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server, requests }),
    ),
  );
}

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi({ unreachableDatabase: true });
});
afterAll(async () => {
  await t?.close();
});

const post = (url: string, auth: Record<string, string>, body: unknown) =>
  fetch(`${url}/api/generate/stream`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("POST /api/generate/stream", () => {
  it("streams deterministic text from the local provider by default (no database, no network)", async () => {
    const u = await t.user();
    const res = await post(t.url, u.auth, { prompt: "hello   world" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const { events } = await readSse(res, (e) => e.some((x) => x.event === "done"));
    const text = events.filter((e) => e.event === "delta").map((e) => (JSON.parse(e.data ?? "{}") as { text: string }).text);
    expect(text.join("")).toBe("Local echo: hello world");
    expect(text.length).toBeGreaterThan(1);
    expect(JSON.parse(events.at(-1)?.data ?? "{}")).toEqual({ provider: "local", finishReason: "stop" });
    const short = await readSse(await post(t.url, u.auth, { prompt: "a b c d", maxTokens: 2 }), (e) => e.some((x) => x.event === "done"));
    expect(JSON.parse(short.events.at(-1)?.data ?? "{}")).toEqual({ provider: "local", finishReason: "length" });
    expect((await post(t.url, u.auth, { prompt: "" })).status).toBe(400);
    expect((await post(t.url, {}, { prompt: "x" })).status).toBe(401);
  });

  it("uses an OpenAI-compatible provider when configured, and answers 503 when it is down", async () => {
    const fake = await fakeOpenAi();
    const api = await startTestApi({
      unreachableDatabase: true,
      env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "sk-test", OPENAI_MODEL: "tiny" },
    });
    try {
      const u = await api.user();
      const res = await post(api.url, u.auth, { prompt: "hi", system: "be brief", maxTokens: 7 });
      const { events } = await readSse(res, (e) => e.some((x) => x.event === "done"));
      expect(events.map((e) => e.event)).toEqual(["delta", "delta", "done"]);
      expect(events.slice(0, 2).map((e) => (JSON.parse(e.data ?? "{}") as { text: string }).text)).toEqual(["Hel", "lo"]);
      expect(fake.requests[0]).toMatchObject({
        path: "/v1/chat/completions",
        model: "tiny",
        stream: true,
        max_tokens: 7,
        authorization: "Bearer sk-test",
        messages: [
          { role: "system", content: "be brief" },
          { role: "user", content: "hi" },
        ],
      });
      fake.server.closeAllConnections();
      await new Promise((r) => fake.server.close(r));
      const down = await post(api.url, u.auth, { prompt: "hi" });
      expect(down.status).toBe(503);
    } finally {
      await api.close();
      fake.server.close();
    }
  });
});

/** A provider that stays silent until it is aborted, then yields one chunk and hangs forever. */
class SilentProvider implements TextProvider {
  readonly name = "silent";
  signal: AbortSignal | undefined;

  async *generate(_input: GenerateInput, signal: AbortSignal): AsyncIterable<GenerateChunk> {
    this.signal = signal;
    await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    yield { type: "delta", text: "too late" };
    await new Promise(() => undefined);
  }
}

describe("POST /api/generate/stream when the client leaves early", () => {
  it("aborts the provider when the client leaves before the first chunk, and leaves no stream open", async () => {
    const provider = new SilentProvider();
    const api = await startTestApi({ unreachableDatabase: true, deps: { textProvider: provider } });
    try {
      const u = await api.user();
      const controller = new AbortController();
      const request = fetch(`${api.url}/api/generate/stream`, {
        method: "POST",
        headers: { ...u.auth, "content-type": "application/json" },
        body: JSON.stringify({ prompt: "hi" }),
        signal: controller.signal,
      }).catch(() => undefined);
      const signal = await eventually(() => provider.signal);
      expect(signal.aborted).toBe(false);
      controller.abort();
      await request;
      await eventually(() => signal.aborted);
      await eventually(() => api.api.sse.size === 0);
      expect(api.api.sse.size).toBe(0);
    } finally {
      await api.close();
    }
  });

  it("gives up on an OpenAI-compatible provider that stays silent past OPENAI_TIMEOUT_MS (503 before the stream)", {
    timeout: 10_000,
  }, async () => {
    const silent = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.flushHeaders();
    });
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const api = await startTestApi({
      unreachableDatabase: true,
      env: { OPENAI_BASE_URL: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`, OPENAI_TIMEOUT_MS: "200" },
    });
    try {
      const u = await api.user();
      const res = await post(api.url, u.auth, { prompt: "hi" });
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("service_unavailable");
      expect(api.api.sse.size).toBe(0);
    } finally {
      await api.close();
      silent.closeAllConnections();
      silent.close();
    }
  });
});
