import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, startTestApi, type TestApi } from "./helpers.js";

// The API's limits are caps on what a user holds at once: a refusal states the policy in the IETF
// draft-8 fields (`RateLimit-Policy` with quota unit "concurrent-requests", `RateLimit` with
// nothing left) besides `Retry-After`, and the web origin may read them.
let t: TestApi;
beforeAll(async () => {
  t = await startTestApi({ env: { MAX_STREAMS_PER_USER: "1" } });
});
afterAll(async () => {
  await t?.close();
});

describe("RateLimit headers on the API's caps", () => {
  it("a stream over MAX_STREAMS_PER_USER answers 429 with Retry-After, RateLimit and RateLimit-Policy, readable by the web origin", async () => {
    const u = await t.user();
    const created = await fetch(`${t.url}/api/tasks`, {
      method: "POST",
      headers: { ...u.auth, "content-type": "application/json" },
      body: JSON.stringify({ title: "headers" }),
    });
    const taskId = ((await created.json()) as { data: { id: string } }).data.id;
    const held = await fetch(`${t.url}/api/tasks/${taskId}/stream`, { headers: u.auth });
    expect(held.status).toBe(200);
    const refused = await fetch(`${t.url}/api/tasks/${taskId}/stream`, { headers: { ...u.auth, origin: "http://localhost:5173" } });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("rate_limited");
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(refused.headers.get("ratelimit")).toBe('"streams";r=0');
    expect(refused.headers.get("ratelimit-policy")).toBe('"streams";q=1;qu="concurrent-requests"');
    const exposed = refused.headers.get("access-control-expose-headers") ?? "";
    for (const name of ["retry-after", "ratelimit", "ratelimit-policy"]) expect(exposed).toContain(name);
    await held.body?.cancel();
    await eventually(() => t.api.caps.localCount("streams", u.id) === 0);
  });
});
