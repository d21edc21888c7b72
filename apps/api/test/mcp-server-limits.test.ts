import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, startTestApi, type TestApi } from "./helpers.js";
import { accessToken, MCP_POST_HEADERS, post, toolCall } from "./mcp-kit.js";

const REDIS_URL = process.env.REDIS_URL;

/** A clock the test moves (the API's verifier and its in-process rate count read it). */
let nowMs = Date.now();
const clock = () => nowMs;
const iat = () => Math.floor(nowMs / 1000);

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi({
    env: { MCP_SERVER_TOOL_CALLS_PER_MINUTE: "3", MCP_SERVER_MAX_REQUESTS_PER_USER: "1" },
    deps: { now: clock },
  });
});
afterAll(() => t?.close());

const LIST = toolCall("list_tasks", {});
const errorOf = async (res: Response) =>
  (await res.json()) as { id?: unknown; error: { code: number; message: string; data?: { code: string } } };

describe("tool calls per minute, per user", () => {
  it("answers the calls within the rate with their RateLimit fields, then 429 with Retry-After until a minute has passed", async () => {
    const u = await t.user();
    const token = await accessToken(t, u.id, { iat: iat() });
    for (const remaining of [2, 1, 0]) {
      const res = await post(t, token, LIST);
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit")).toBe(`"mcp-tool-calls";r=${remaining}`);
      expect(res.headers.get("ratelimit-policy")).toBe(`"mcp-tool-calls";q=3;w=60`);
    }
    const refused = await post(t, token, toolCall("list_tasks", {}, 9));
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("60");
    expect(await errorOf(refused)).toMatchObject({ id: 9, error: { code: -32000, data: { code: "rate_limited" } } });
    // What is not a tool call is not counted; another user has a rate of their own.
    expect((await post(t, token, { jsonrpc: "2.0", id: 1, method: "tools/list" })).status).toBe(200);
    const other = await t.user();
    expect((await post(t, await accessToken(t, other.id, { iat: iat() }), LIST)).status).toBe(200);
    // A batch of calls counts each one, and is refused whole.
    nowMs += 30_000;
    expect((await post(t, token, LIST)).status).toBe(429);
    nowMs += 30_001;
    expect(
      (
        await post(t, token, [
          toolCall("list_tasks", {}, 1),
          toolCall("list_chats", {}, 2),
          toolCall("search", { query: "x" }, 3),
          toolCall("list_projects", {}, 4),
        ])
      ).status,
    ).toBe(429);
    const batch = await post(t, token, [toolCall("list_tasks", {}, 1), toolCall("list_chats", {}, 2)]);
    expect(batch.status).toBe(200);
    expect(batch.headers.get("ratelimit")).toBe(`"mcp-tool-calls";r=1`);
  });
});

describe("requests under way, per user", () => {
  it("refuses a second request while one is under way (429), and admits the next once it ended", async () => {
    const u = await t.user();
    const token = await accessToken(t, u.id, { iat: iat() });
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    // A request whose body arrives slowly holds its slot from authentication to its answer.
    let answered: Promise<number> = Promise.resolve(0);
    const slow = http.request(`${t.url}/api/mcp`, {
      method: "POST",
      headers: { ...MCP_POST_HEADERS, authorization: `Bearer ${token}`, "content-length": String(Buffer.byteLength(body)) },
    });
    answered = new Promise((resolve, reject) => {
      slow.on("response", (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      });
      slow.on("error", reject);
    });
    slow.write(body.slice(0, 10));
    await eventually(() => t.api.caps.localCount("mcpRequests", u.id) === 1);

    const refused = await post(t, token, { jsonrpc: "2.0", id: 2, method: "tools/list" });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(refused.headers.get("ratelimit-policy")).toBe(`"mcpRequests";q=1;qu="concurrent-requests"`);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("rate_limited");
    // Someone else is not held up.
    const other = await t.user();
    expect((await post(t, await accessToken(t, other.id, { iat: iat() }), { jsonrpc: "2.0", id: 3, method: "tools/list" })).status).toBe(
      200,
    );

    slow.end(body.slice(10));
    expect(await answered).toBe(200);
    await eventually(() => t.api.caps.localCount("mcpRequests", u.id) === 0);
    expect((await post(t, token, { jsonrpc: "2.0", id: 4, method: "tools/list" })).status).toBe(200);
  });
});

describe.skipIf(!REDIS_URL)("across instances (Redis)", () => {
  let second: TestApi;
  let third: TestApi;
  beforeAll(async () => {
    const env = { MCP_SERVER_TOOL_CALLS_PER_MINUTE: "4", REDIS_URL: REDIS_URL ?? "" };
    second = await startTestApi({ env });
    // The third instance verifies with the second's key set: one user, one token, two instances.
    third = await startTestApi({ env, deps: { verifier: second.api.verifier } });
  });
  afterAll(async () => {
    await third?.close();
    await second?.close();
  });

  it("holds one user's rate across instances", async () => {
    const u = await second.user();
    const token = await accessToken(second, u.id);
    const statuses: number[] = [];
    for (const instance of [second, third, second, third, third]) statuses.push((await post(instance, token, LIST)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
  });
});
