import { randomUUID } from "node:crypto";
import { buildHostileTokens, type HostileToken, hostileAuthorizationCases } from "@app/auth-verify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApi, type TestApi } from "./helpers.js";
import { type RawResponse, rawRequest, tryUpgrade } from "./raw-http.js";

// The shared hostile-token corpus (@app/auth-verify/testing) over real HTTP: a JSON business route,
// the streaming middleware (SSE), the multipart middleware (upload) and the WebSocket upgrade.
// Every token answers 401 with the error envelope; no request answers 5xx; the process keeps
// serving valid tokens afterwards.
let t: TestApi;
let corpus: HostileToken[];
let valid: string;
let userId: string;
const statuses: number[] = [];

beforeAll(async () => {
  t = await startTestApi();
  const u = await t.user();
  userId = u.id;
  valid = u.token;
  corpus = await buildHostileTokens({ key: t.stub.signingKey, issuer: t.config.issuer, audience: t.config.audience, subject: u.id });
  // Warm the key set with a valid request so every refusal below is the token's fault.
  expect((await fetch(`${t.url}/api/me`, { headers: u.auth })).status).toBe(200);
});
afterAll(async () => {
  await t?.close();
});

const AUTH_CODES = [
  "missing_token",
  "malformed_token",
  "invalid_signature",
  "token_expired",
  "token_not_yet_valid",
  "invalid_claims",
  "unknown_key",
];

function expect401(res: RawResponse, name: string) {
  statuses.push(res.status);
  expect(res.status, name).toBe(401);
  const body = res.json() as { ok: boolean; error: { code: string; message: string } };
  expect(body.ok, name).toBe(false);
  expect(AUTH_CODES, name).toContain(body.error.code);
  expect(body.error.message, name).toEqual(expect.any(String));
}

/** The three HTTP entry patterns: JSON route, SSE middleware, multipart middleware. */
function entries(taskId: string) {
  const boundary = "----hostile";
  const multipart = `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.txt"\r\ncontent-type: text/plain\r\n\r\nhello\r\n--${boundary}--\r\n`;
  return [
    { name: "GET /api/tasks (JSON route)", path: "/api/tasks", method: "GET", extra: [] as Array<[string, string]>, body: undefined },
    { name: "GET /api/me (JSON route, no database)", path: "/api/me", method: "GET", extra: [], body: undefined },
    { name: "GET /api/tasks/:id/stream (SSE)", path: `/api/tasks/${taskId}/stream`, method: "GET", extra: [], body: undefined },
    {
      name: "POST /api/uploads (multipart)",
      path: "/api/uploads",
      method: "POST",
      extra: [["content-type", `multipart/form-data; boundary=${boundary}`]] as Array<[string, string]>,
      body: multipart,
    },
  ];
}

describe("the hostile-token corpus over HTTP and the WebSocket upgrade", () => {
  it("has at least 30 tokens", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(30);
  });

  it("every token answers 401 with the envelope on every HTTP entry", async () => {
    const taskId = randomUUID();
    for (const entry of entries(taskId)) {
      for (const { name, token } of corpus) {
        const res = await rawRequest(`${t.url}${entry.path}`, {
          method: entry.method,
          headers: [["authorization", `Bearer ${token}`], ...entry.extra],
          ...(entry.body === undefined ? {} : { body: entry.body }),
        });
        expect401(res, `${entry.name}: ${name}`);
        expect(res.headers["www-authenticate"]).toBe('Bearer error="invalid_token"');
      }
    }
  });

  it("every malformed Authorization header (lowercase, doubled, two headers...) and a cookie alone answer 401", async () => {
    const cookie = t.stub.addSession({ id: userId, email: "x@example.com", name: "X" });
    const cases = [
      ...hostileAuthorizationCases(valid),
      { name: "a valid session cookie with no bearer", headers: [["cookie", cookie]] as Array<[string, string]> },
      { name: "no credentials at all", headers: [] as Array<[string, string]> },
    ];
    for (const entry of entries(randomUUID())) {
      for (const c of cases) {
        const res = await rawRequest(`${t.url}${entry.path}`, {
          method: entry.method,
          headers: [...c.headers, ...entry.extra],
          ...(entry.body === undefined ? {} : { body: entry.body }),
        });
        expect401(res, `${entry.name}: ${c.name}`);
      }
    }
  });

  it("every token refuses the WebSocket upgrade with 401 and the envelope", async () => {
    const ws = t.url.replace("http:", "ws:");
    const presented = [
      ...corpus.map(({ name, token }) => ({ name, query: `token=${encodeURIComponent(token)}` })),
      { name: "no token", query: "" },
      { name: "empty token", query: "token=" },
      { name: "Bearer inside the token", query: `token=${encodeURIComponent(`Bearer ${valid}`)}` },
      { name: "two token parameters", query: `token=${valid}&token=${valid}` },
      { name: "token parameter in another case", query: `TOKEN=${valid}` },
    ];
    for (const { name, query } of presented) {
      const res = await tryUpgrade(`${ws}/api/ws?${query}`);
      statuses.push(res.status);
      expect(res.status, name).toBe(401);
      const body = JSON.parse(res.body) as { ok: boolean; error: { code: string } };
      expect(body.ok, name).toBe(false);
      expect(AUTH_CODES, name).toContain(body.error.code);
    }
    // The header path is not a WebSocket transport: a valid bearer header without ?token= is refused.
    expect((await tryUpgrade(`${ws}/api/ws`, { authorization: `Bearer ${valid}` })).status).toBe(401);
  });

  it("answered no 5xx, logged no token, and the process still serves valid tokens", async () => {
    expect(statuses.length).toBeGreaterThan(corpus.length * 5);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    const text = t.logs.join("");
    for (const { token } of corpus) {
      const signature = token.split(".")[2] ?? "";
      if (signature.length > 20) expect(text).not.toContain(signature);
    }
    expect(text).not.toContain(valid);
    const me = await fetch(`${t.url}/api/me`, { headers: { authorization: `Bearer ${valid}` } });
    expect(me.status).toBe(200);
    expect(await tryUpgrade(`${t.url.replace("http:", "ws:")}/api/ws?token=${valid}`)).toEqual({ status: 101, body: "" });
  });
});
