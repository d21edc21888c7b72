import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSse, startTestApi, type TestApi } from "./helpers.js";
import { rawRequest, tryUpgrade } from "./raw-http.js";

// The auth scheme is case-insensitive (RFC 9110 §11.1, RFC 6750 §2.1): `bearer`, `BEARER` and
// `BeArEr` authenticate like `Bearer` on every bearer entry (packages/auth-verify
// extractBearerToken), while the whitespace rule stays strict: exactly one space, nothing around.
let t: TestApi;
let token: string;
let taskId: string;

const SPELLINGS = ["Bearer", "bearer", "BEARER", "BeArEr"];

beforeAll(async () => {
  t = await startTestApi();
  const u = await t.user();
  token = u.token;
  const created = await fetch(`${t.url}/api/tasks`, {
    method: "POST",
    headers: { ...u.auth, "content-type": "application/json" },
    body: JSON.stringify({ title: "scheme" }),
  });
  expect(created.status).toBe(201);
  taskId = ((await created.json()) as { data: { id: string } }).data.id;
});
afterAll(async () => {
  await t?.close();
});

describe("the Bearer scheme in any letter case", () => {
  it("authenticates a JSON route (GET /api/me, GET /api/tasks)", async () => {
    for (const scheme of SPELLINGS) {
      for (const path of ["/api/me", "/api/tasks"]) {
        const res = await rawRequest(`${t.url}${path}`, { headers: [["authorization", `${scheme} ${token}`]] });
        expect(res.status, `${scheme} ${path}`).toBe(200);
      }
    }
  });

  it("authenticates the stream middleware (GET /api/tasks/:id/stream opens its SSE stream)", async () => {
    for (const scheme of SPELLINGS) {
      const res = await fetch(`${t.url}/api/tasks/${taskId}/stream`, { headers: { authorization: `${scheme} ${token}` } });
      expect(res.status, scheme).toBe(200);
      expect(res.headers.get("content-type"), scheme).toContain("text/event-stream");
      await readSse(res, () => true, 500);
    }
  });

  it("keeps the whitespace strict: a tab, two spaces, or whitespace around the token answer 401 malformed_token", async () => {
    for (const scheme of ["bearer", "BEARER"]) {
      for (const value of [`${scheme}\t${token}`, `${scheme}  ${token}`, `${scheme} ${token.slice(0, 30)} ${token.slice(30)}`]) {
        for (const path of ["/api/me", `/api/tasks/${taskId}/stream`]) {
          const res = await rawRequest(`${t.url}${path}`, { headers: [["authorization", value]] });
          expect(res.status, JSON.stringify(value)).toBe(401);
          expect((res.json() as { error: { code: string } }).error.code).toBe("malformed_token");
        }
      }
    }
  });

  it("leaves the WebSocket entry as it is: ?token= is the bare token, the entry supplies the scheme", async () => {
    const ws = t.url.replace("http:", "ws:");
    expect(await tryUpgrade(`${ws}/api/ws?token=${token}`)).toEqual({ status: 101, body: "" });
    // A scheme inside the parameter is not a token, in any case; and a header is not the transport.
    for (const scheme of SPELLINGS) {
      expect((await tryUpgrade(`${ws}/api/ws?token=${encodeURIComponent(`${scheme} ${token}`)}`)).status, scheme).toBe(401);
      expect((await tryUpgrade(`${ws}/api/ws`, { authorization: `${scheme} ${token}` })).status, scheme).toBe(401);
    }
  });
});
