import { randomBytes } from "node:crypto";
import { SET_AUTH_JWT_HEADER } from "@app/contracts";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { launchStack, type RunningStack } from "./launch.js";

// An orderly stop drains edge last (launch.ts): the API's `shutdown` SSE event and WebSocket
// close 1001 travel through the still-running gateway, instead of the gateway resetting every
// client first (close 1006, a stream that just ends).
let database: TestDatabase;
let stack: RunningStack;
const lines: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  stack = await launchStack({
    databaseUrl: database.url,
    port: 0,
    authSecret: randomBytes(32).toString("base64url"),
    dataEncryptionKey: randomBytes(32).toString("base64url"),
    env: { SSE_HEARTBEAT_MS: "60000", UPLOAD_DIR: `/tmp/stack-drain-uploads-${process.pid}` },
    onLine: (name, line) => lines.push(`${name} ${line}`),
  });
});
afterAll(async () => {
  await stack?.stop();
  await database?.drop();
});

async function jwt(): Promise<string> {
  const email = `drain-${randomBytes(4).toString("hex")}@example.com`;
  const body = (extra: object) => JSON.stringify({ email, password: "correct horse battery", ...extra });
  const json = { "content-type": "application/json" };
  await fetch(`${stack.baseUrl}/api/auth/sign-up/email`, { method: "POST", headers: json, body: body({ name: "Drain" }) });
  const signIn = await fetch(`${stack.baseUrl}/api/auth/sign-in/email`, { method: "POST", headers: json, body: body({}) });
  const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const session = await fetch(`${stack.baseUrl}/api/auth/get-session`, { method: "POST", headers: { cookie } });
  return session.headers.get(SET_AUTH_JWT_HEADER) ?? "";
}

describe("orderly stop of the stack", () => {
  it("clients connected through the gateway get the API's shutdown event and WebSocket close 1001", async () => {
    const token = await jwt();
    const auth = { authorization: `Bearer ${token}` };
    // The API fetches identity's keys lazily and may still be in its retry pause from startup.
    let created = new Response(null, { status: 503 });
    for (let i = 0; i < 50 && created.status === 503; i += 1) {
      if (i) await new Promise((r) => setTimeout(r, 200));
      created = await fetch(`${stack.baseUrl}/api/tasks`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ title: "drain" }),
      });
    }
    expect(created.status, lines.slice(-20).join("\n")).toBe(201);
    const task = ((await created.json()) as { data: { id: string } }).data;
    const sse = await fetch(`${stack.baseUrl}/api/tasks/${task.id}/stream`, { headers: auth });
    expect(sse.status).toBe(200);
    const sseText = (async () => {
      let text = "";
      const decoder = new TextDecoder();
      try {
        for await (const chunk of sse.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk, { stream: true });
      } catch {
        // a reset: the text so far tells
      }
      return text;
    })();
    const socket = new WebSocket(`${stack.baseUrl.replace("http:", "ws:")}/api/ws?token=${token}`);
    socket.on("error", () => undefined);
    const closed = new Promise<number>((resolve) => socket.on("close", (code) => resolve(code)));
    await new Promise<void>((resolve) => socket.once("message", () => resolve()));

    await stack.stop();
    expect(await sseText).toMatch(/event: shutdown\n/);
    expect(await closed).toBe(1001);
  });
});
