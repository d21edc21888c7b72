import { randomUUID } from "node:crypto";
import { once } from "node:events";
import http from "node:http";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startTestApi, type TestApi } from "./helpers.js";
import { rawRequest } from "./raw-http.js";

// Property-based fuzzing of the HTTP entry (fast-check): 10,000 generated Authorization values
// sent over keep-alive connections to the JSON route, the SSE middleware and the multipart
// middleware. Every answer is 401 with the error envelope; never a 5xx; never a crash.
const RUNS = 10_000;
const WIDTH = 16;
let t: TestApi;
let valid: string;
const agent = new http.Agent({ keepAlive: true, maxSockets: WIDTH });

beforeAll(async () => {
  t = await startTestApi({ logLevel: "error" });
  valid = (await t.user()).token;
  expect((await fetch(`${t.url}/api/me`, { headers: { authorization: `Bearer ${valid}` } })).status).toBe(200);
});
afterAll(async () => {
  agent.destroy();
  await t?.close();
});

const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".split("");
/** Characters a client can put in a header value (HTAB, visible ASCII, obs-text). */
const headerChar = fc.oneof(
  fc.constantFrom(...B64URL),
  fc.constantFrom(".", " ", "\t", "=", "+", "/", ",", '"', "\\"),
  fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)),
);

const mutatedToken = () =>
  fc.array(fc.tuple(fc.nat(), headerChar, fc.constantFrom("replace", "insert", "delete")), { minLength: 1, maxLength: 3 }).map((edits) => {
    let token = valid;
    for (const [at, ch, op] of edits) {
      const i = at % (token.length + 1);
      token =
        op === "replace"
          ? `${token.slice(0, i)}${ch}${token.slice(i + 1)}`
          : op === "insert"
            ? `${token.slice(0, i)}${ch}${token.slice(i)}`
            : `${token.slice(0, i)}${token.slice(i + 1)}`;
    }
    return `Bearer ${token}`;
  });

const authorization = () =>
  fc.oneof(
    fc.string({ unit: headerChar, maxLength: 200 }),
    mutatedToken(),
    fc
      .tuple(
        fc.constantFrom("Bearer ", "bearer ", "Bearer  ", "Basic ", "Bearer\t", "Token "),
        fc.string({ unit: headerChar, maxLength: 300 }),
      )
      .map(([s, v]) => `${s}${v}`),
    fc
      .array(fc.string({ unit: fc.constantFrom(...B64URL), minLength: 1, maxLength: 120 }), { minLength: 1, maxLength: 5 })
      .map((parts) => `Bearer ${parts.join(".")}`),
  );

/** The server trims optional whitespace around a header value: what it will see. */
const seenAs = (value: string) => value.replace(/^[ \t]+|[ \t]+$/g, "");

describe("fuzzing the HTTP entry (fast-check)", () => {
  it(`answers ${RUNS} generated Authorization headers with 401 and the envelope, never 5xx`, async () => {
    const taskId = randomUUID();
    const targets = [
      { path: "/api/me", method: "GET", headers: [] as Array<[string, string]>, body: undefined },
      { path: "/api/tasks", method: "GET", headers: [], body: undefined },
      { path: `/api/tasks/${taskId}/stream`, method: "GET", headers: [], body: undefined },
      {
        path: "/api/uploads",
        method: "POST",
        headers: [["content-type", "multipart/form-data; boundary=x"]] as Array<[string, string]>,
        body: "--x--\r\n",
      },
    ];
    const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
    const samples = fc.sample(
      fc.tuple(authorization(), fc.nat({ max: targets.length - 1 })).filter(([value]) => seenAs(value) !== `Bearer ${valid}`),
      { numRuns: RUNS, seed },
    );
    expect(samples).toHaveLength(RUNS);
    const statuses = new Map<number, number>();
    const failures: string[] = [];
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < samples.length; i = next++) {
        const [value, which] = samples[i] as [string, number];
        const target = targets[which] ?? (targets[0] as (typeof targets)[number]);
        const res = await rawRequest(`${t.url}${target.path}`, {
          method: target.method,
          headers: [["authorization", value], ...target.headers],
          agent,
          ...(target.body === undefined ? {} : { body: target.body }),
        });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const body = res.json() as { ok?: unknown; error?: { code?: unknown } };
        if (res.status !== 401 || body.ok !== false || typeof body.error?.code !== "string") {
          failures.push(`${JSON.stringify(value)} -> ${res.status} ${res.text.slice(0, 200)}`);
        }
      }
    };
    await Promise.all(Array.from({ length: WIDTH }, worker));
    expect(failures.slice(0, 5), `FUZZ_SEED=${seed} reproduces this run`).toEqual([]);
    expect([...statuses.keys()]).toEqual([401]);
    expect(statuses.get(401)).toBe(RUNS);
    expect((await fetch(`${t.url}/api/me`, { headers: { authorization: `Bearer ${valid}` } })).status).toBe(200);
  }, 120_000);
});

/** One UTF-16 code unit of any value, with lone surrogates and NUL made frequent. */
const codeUnit = fc.oneof(
  fc.constantFrom("\u0000", "\ud800", "\udbff", "\udc00", "\udfff", "\u001b", "\u202e"),
  fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
  fc.constantFrom(..."0123456789abcdef-".split("")),
);
const hostileText = () => fc.string({ unit: codeUnit, minLength: 1, maxLength: 40 });

describe("fuzzing ids (fast-check: lone surrogates, NUL, controls)", () => {
  const CURSOR_RUNS = 600;
  it(`answers ${CURSOR_RUNS} generated list cursors with 200 or 400, never 5xx`, async () => {
    const auth = `Bearer ${valid}`;
    const routes = ["/api/tasks", "/api/projects", "/api/agents", "/api/chats", "/api/mcp-servers"];
    const cursor = fc.oneof(
      hostileText().map((id) => Buffer.from(JSON.stringify({ id }), "utf8").toString("base64url")),
      hostileText().map((raw) => Buffer.from(raw, "utf8").toString("base64url")),
      fc.string({ unit: fc.constantFrom(...B64URL), maxLength: 60 }),
    );
    const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
    const samples = fc.sample(fc.tuple(cursor, fc.constantFrom(...routes)), { numRuns: CURSOR_RUNS, seed });
    const failures: string[] = [];
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < samples.length; i = next++) {
        const [c, route] = samples[i] as [string, string];
        const res = await rawRequest(`${t.url}${route}?cursor=${encodeURIComponent(c)}`, { headers: [["authorization", auth]], agent });
        if (res.status !== 200 && res.status !== 400)
          failures.push(`${route} ${JSON.stringify(c)} -> ${res.status} ${res.text.slice(0, 200)}`);
      }
    };
    await Promise.all(Array.from({ length: WIDTH }, worker));
    expect(failures.slice(0, 5), `FUZZ_SEED=${seed} reproduces this run`).toEqual([]);
  }, 60_000);

  const WS_RUNS = 400;
  it(`answers ${WS_RUNS} generated WebSocket taskIds with not_found or bad_request, never internal_error`, async () => {
    const ws = new WebSocket(`${t.url.replace("http", "ws")}/api/ws?token=${valid}`);
    const codes = new Map<string, number>();
    let answered = 0;
    ws.on("message", (data) => {
      const m = JSON.parse(String(data)) as { type: string; code?: string };
      if (m.type !== "error" && m.type !== "unsubscribed") return;
      answered += 1;
      if (m.code) codes.set(m.code, (codes.get(m.code) ?? 0) + 1);
    });
    await once(ws, "open");
    const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
    // Unique ids: a repeated subscribe to a task that is not found is (rightly) not answered twice.
    const [ids = []] = fc.sample(fc.uniqueArray(hostileText(), { minLength: WS_RUNS, maxLength: WS_RUNS }), { numRuns: 1, seed });
    for (const [i, taskId] of ids.entries()) ws.send(JSON.stringify({ type: i % 2 ? "unsubscribe" : "subscribe", taskId }));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${answered} of ${WS_RUNS} answered`)), 30_000);
      const poll = setInterval(() => {
        if (answered < WS_RUNS) return;
        clearInterval(poll);
        clearTimeout(timer);
        resolve();
      }, 20);
    });
    ws.close();
    expect(
      [...codes.keys()].filter((c) => c !== "not_found" && c !== "bad_request"),
      `FUZZ_SEED=${seed}`,
    ).toEqual([]);
  }, 60_000);
});
