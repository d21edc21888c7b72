import { describe, expect, it } from "vitest";
import { createClient, type FetchLike, memoryStorage } from "../src/index.js";

/** A scripted service: each call gets the next answer; every request is recorded. */
function scripted(answers: ((url: string, init: RequestInit) => Response)[]) {
  const calls: { url: string; headers: Headers }[] = [];
  const fetch: FetchLike = async (url, init = {}) => {
    calls.push({ url, headers: new Headers(init.headers) });
    const next = answers.shift();
    if (!next) throw new Error(`unexpected call to ${url}`);
    return next(url, init);
  };
  return { fetch, calls };
}

const sse = (text: string) => () => new Response(text, { status: 200, headers: { "content-type": "text/event-stream" } });
const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  () =>
    new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

function event(id: string, text: string): string {
  const data = { id, taskId: "t1", type: "message.created", data: { text }, createdAt: "2026-01-01T00:00:00.000Z" };
  return `id: ${id}\nevent: message.created\ndata: ${JSON.stringify(data)}\n\n`;
}

const session = {
  session: { id: "s", userId: "u", expiresAt: "x", createdAt: "x" },
  user: { id: "u", email: "e", name: "n", emailVerified: false, createdAt: "x", updatedAt: "x" },
};

describe("task stream reconnection", () => {
  it("reconnects after the stream ends, resuming with Last-Event-ID, and stops on a 4xx", async () => {
    const service = scripted([
      sse(`retry: 0\n\n${event("7", "a")}${event("8", "b")}`),
      sse(`: heartbeat\n\n${event("9", "c")}event: shutdown\ndata: {"reason":"restart"}\n\n`),
      json(404, { ok: false, error: { code: "not_found", message: "task not found" } }),
    ]);
    const client = createClient({ baseUrl: "http://svc.test", storage: memoryStorage({ authToken: "jwt-1" }), fetch: service.fetch });
    const seen: string[] = [];
    const stream = client.tasks.stream("t1", { onEvent: (e) => seen.push(e.id ?? ""), retryMs: 0 });
    expect(await stream.done).toMatchObject({ status: 404, code: "not_found" });
    expect(seen).toEqual(["7", "8", "9"]);
    expect(stream.lastEventId).toBe("9");
    expect(service.calls.map((c) => c.headers.get("last-event-id"))).toEqual([null, "8", "9"]);
    expect(service.calls.every((c) => c.headers.get("authorization") === "Bearer jwt-1")).toBe(true);
  });

  it("on 401 asks get-session once, then reconnects with the fresh JWT", async () => {
    const service = scripted([
      json(401, { ok: false, error: { code: "token_expired", message: "expired" } }),
      json(200, session, { "set-auth-jwt": "jwt-2" }),
      sse(event("1", "hello")),
      json(403, { ok: false, error: { code: "forbidden", message: "no" } }),
    ]);
    const storage = memoryStorage({ authToken: "jwt-old" });
    const client = createClient({ baseUrl: "http://svc.test", storage, fetch: service.fetch });
    const seen: string[] = [];
    const stream = client.tasks.stream("t1", { onEvent: (e) => seen.push(e.id ?? ""), retryMs: 0 });
    expect(await stream.done).toMatchObject({ status: 403 });
    expect(seen).toEqual(["1"]);
    expect(service.calls.map((c) => new URL(c.url).pathname)).toEqual([
      "/api/tasks/t1/stream",
      "/api/auth/get-session",
      "/api/tasks/t1/stream",
      "/api/tasks/t1/stream",
    ]);
    expect(service.calls[2]?.headers.get("authorization")).toBe("Bearer jwt-2");
    expect(storage.getItem("authToken")).toBe("jwt-2");
  });

  it("close() ends a stream that is waiting to reconnect", async () => {
    const service = scripted([sse(event("1", "x"))]);
    const client = createClient({ baseUrl: "http://svc.test", storage: memoryStorage({ authToken: "j" }), fetch: service.fetch });
    let stream: ReturnType<typeof client.tasks.stream> | undefined;
    stream = client.tasks.stream("t1", { onEvent: () => stream?.close(), retryMs: 60_000 });
    expect(await stream.done).toBeUndefined();
    expect(service.calls).toHaveLength(1);
  });
});
