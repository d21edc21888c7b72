import { createHash, randomBytes } from "node:crypto";
import { readdir } from "node:fs/promises";
import http from "node:http";
import { createDb } from "@app/db";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { call, secret, signUp, waitFor } from "./client.js";
import { type Cluster, type Service, startCluster } from "./cluster.js";

// Graceful shutdown on SIGTERM: a request in flight when the signal arrives finishes (its row and
// file complete), one the client abandons leaves no row and no file, SSE streams get a `shutdown`
// event, WebSockets close with 1001 and the reason, the process exits 0 without cutting anyone off.
let database: TestDatabase;
let cluster: Cluster;

beforeAll(async () => {
  database = await createTestDatabase();
  cluster = await startCluster({
    databaseUrl: database.url,
    authSecret: secret(),
    dataEncryptionKey: secret(),
    env: { SHUTDOWN_DRAIN_MS: "8000", SSE_HEARTBEAT_MS: "60000" },
  });
});
afterAll(async () => {
  await cluster?.stop();
  await database?.drop();
});

/** A request whose body the test writes piece by piece; resolves with the answer (or the error). */
function slowRequest(url: string, headers: Record<string, string>) {
  const req = http.request(url, { method: "POST", headers: { ...headers, "transfer-encoding": "chunked" }, agent: false });
  const answer = new Promise<{ status: number; body: string } | Error>((resolve) => {
    req.on("response", (res) => {
      let body = "";
      res.on("data", (c: Buffer) => {
        body += c.toString();
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      res.on("error", resolve);
    });
    req.on("error", resolve);
  });
  return { req, answer };
}

/** Waits for a line of `service` matching `pattern` (seen from now on, or already). */
const logged = (service: Service, pattern: RegExp) =>
  waitFor(
    `${service.name}: ${pattern}`,
    async () => cluster.lines.some((l) => l.startsWith(`${service.name} `) && pattern.test(l)),
    15_000,
    20,
  );

/** How many uploads the API is writing: each has a `.partial` file (apps/api/src/uploads/file-store.ts). */
const partials = async () => (await readdir(cluster.uploadDir)).filter((name) => name.endsWith(".partial")).length;

describe("graceful shutdown on SIGTERM", () => {
  it("API: in-flight upload finishes, abandoned one leaves nothing, SSE gets shutdown, WS closes 1001", async () => {
    const [identity] = cluster.identities;
    const [api] = cluster.apis;
    if (!identity || !api) throw new Error("cluster incomplete");
    const account = await signUp(identity.url);
    const auth = { authorization: `Bearer ${account.jwt}` };
    const task = await call<{ data: { id: string } }>(`${api.url}/api/tasks`, { method: "POST", jwt: account.jwt, body: { title: "t" } });

    // An SSE stream and a subscribed WebSocket.
    const sse = await fetch(`${api.url}/api/tasks/${task.body.data.id}/stream`, { headers: auth });
    expect(sse.status).toBe(200);
    const sseText = (async () => {
      let text = "";
      const decoder = new TextDecoder();
      for await (const chunk of sse.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk, { stream: true });
      return text;
    })();
    const socket = new WebSocket(`${api.url.replace("http:", "ws:")}/api/ws?token=${account.jwt}`);
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      socket.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    await new Promise<void>((resolve) => socket.once("message", () => resolve()));

    // Two uploads in flight: both send their headers and half of the file before the signal.
    const file = randomBytes(256 * 1024);
    const boundary = "----shutdown";
    const head = `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="big.bin"\r\ncontent-type: application/pdf\r\n\r\n`;
    const tail = `\r\n--${boundary}--\r\n`;
    const headers = { ...auth, "content-type": `multipart/form-data; boundary=${boundary}` };
    const finished = slowRequest(`${api.url}/api/uploads`, headers);
    const abandoned = slowRequest(`${api.url}/api/uploads`, headers);
    for (const r of [finished, abandoned]) r.req.write(Buffer.concat([Buffer.from(head), file.subarray(0, file.length / 2)]));
    await waitFor("both uploads in flight", async () => (await partials()) === 2, 15_000, 20);

    api.process.child.kill("SIGTERM");
    await logged(api, /"msg":"shutting down"/);
    // New connections are refused once shutting down.
    await expect(fetch(`${api.url}/healthz`, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow();

    abandoned.req.destroy();
    // The API has seen the abandon once it removed that upload's partial file.
    await waitFor("the abandoned upload removed", async () => (await partials()) === 1, 15_000, 20);
    finished.req.end(Buffer.concat([file.subarray(file.length / 2), Buffer.from(tail)]));
    const answer = await finished.answer;
    if (answer instanceof Error) throw answer;
    expect(answer.status).toBe(201);
    const upload = JSON.parse(answer.body) as { id: string; size: number; sha256: string };
    expect(upload.size).toBe(file.length);
    expect(upload.sha256).toBe(createHash("sha256").update(file).digest("hex"));

    expect(await api.process.exited).toBe(0);
    expect(await sseText).toMatch(/event: shutdown\ndata: \{"reason":"server shutting down"\}/);
    expect(await closed).toEqual({ code: 1001, reason: "server shutting down" });
    expect(cluster.lines.some((l) => l.startsWith("api-1 ") && l.includes("drain timed out"))).toBe(false);

    // Exactly one complete row and one complete file: nothing half-written.
    const db = createDb(database.url, { max: 1 });
    try {
      const rows = await db.prisma.upload.findMany({ where: { userId: account.userId } });
      expect(rows.map((r) => [r.id, r.size, r.sha256])).toEqual([[upload.id, file.length, upload.sha256]]);
    } finally {
      await db.close();
    }
    expect(await readdir(cluster.uploadDir)).toEqual([upload.id]);
    await api.start();
  }, 60_000);

  it("identity: an in-flight sign-up finishes with its rows, then the process exits 0", async () => {
    const [identity] = cluster.identities;
    if (!identity) throw new Error("cluster incomplete");
    const email = `slow-${randomBytes(4).toString("hex")}@example.com`;
    const body = JSON.stringify({ email, password: "correct horse battery", name: "Slow" });
    const signUpReq = slowRequest(`${identity.url}/api/auth/sign-up/email`, { "content-type": "application/json" });
    await new Promise((resolve) => signUpReq.req.once("socket", (s) => s.once("connect", resolve)));
    signUpReq.req.write(body.slice(0, 20));
    // A connection made after the sign-up's and answered: the server has accepted the sign-up's
    // connection too (it accepts its backlog in order), and read its head and first bytes, written before.
    expect((await fetch(`${identity.url}/healthz`, { signal: AbortSignal.timeout(5_000) })).status).toBe(200);
    identity.process.child.kill("SIGTERM");
    await logged(identity, /"msg":"shutting down"/);
    signUpReq.req.end(body.slice(20));
    const answer = await signUpReq.answer;
    if (answer instanceof Error) throw answer;
    expect(answer.status).toBe(200);
    expect(await identity.process.exited).toBe(0);
    const db = createDb(database.url, { max: 1 });
    try {
      const user = await db.prisma.user.findUniqueOrThrow({ where: { email }, include: { accounts: true, sessions: true } });
      expect(user.accounts).toHaveLength(1);
      expect(user.sessions).toHaveLength(1);
    } finally {
      await db.close();
    }
    await identity.start();
  }, 60_000);
});
