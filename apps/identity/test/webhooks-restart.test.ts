import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createDb, type Db } from "@app/db";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enqueueWebhook } from "../src/webhooks/outbox.js";
import { ORIGIN, SECRET } from "./kit.js";
import { FAST_WEBHOOKS, grantAdmin, type Receiver, startReceiver, until } from "./webhooks-kit.js";

// Identity as it runs in production, `node dist/server.js` (main.ts starts the delivery worker),
// stopped between retries and replaced by a second process on the same database: the attempts
// the first one scheduled are made by the second, and nothing is lost or accepted twice.

const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "dist", "server.js");

/** One identity process: its port and output, and a stop that sends SIGTERM and awaits the exit code. */
interface IdentityProcess {
  baseUrl: string;
  output: string[];
  stop(): Promise<number | null>;
}

async function startIdentity(database: TestDatabase): Promise<IdentityProcess> {
  const child: ChildProcess = spawn(process.execPath, [SERVER], {
    env: {
      PATH: process.env.PATH,
      NODE_ENV: "test",
      DATABASE_URL: database.identityUrl,
      AUTH_SECRET: SECRET,
      PORT: "0",
      CORS_ORIGINS: ORIGIN,
      LOG_FORMAT: "json",
      LOG_LEVEL: "info",
      ...FAST_WEBHOOKS,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`identity did not start:\n${output.join("")}`)), 30_000);
    const read = (chunk: Buffer) => {
      output.push(String(chunk));
      for (const line of String(chunk).split("\n")) {
        if (!line.includes('"listening"')) continue;
        clearTimeout(timer);
        resolve((JSON.parse(line) as { port: number }).port);
      }
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", (chunk: Buffer) => output.push(String(chunk)));
    void exited.then((code) => reject(new Error(`identity exited with ${code}:\n${output.join("")}`)));
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    output,
    async stop() {
      child.kill("SIGTERM");
      return exited;
    },
  };
}

/** JSON POST from the web app's origin, with a cookie; answers the status, body and Set-Cookie. */
async function post(baseUrl: string, route: string, body: unknown, cookie?: string) {
  const res = await fetch(`${baseUrl}${route}`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: ORIGIN, ...(cookie ? { cookie } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, cookies: res.headers.getSetCookie() };
}

let database: TestDatabase;
let db: Db;
let receiver: Receiver;
const running: IdentityProcess[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  db = createDb(database.identityUrl, { max: 2 });
  receiver = await startReceiver();
});

afterAll(async () => {
  for (const identity of running) await identity.stop();
  await receiver?.close();
  await db?.close();
  await database?.drop();
});

describe("webhook delivery across a restart", () => {
  it("loses nothing when identity stops between retries and another instance takes over", async () => {
    const first = await startIdentity(database);
    running.push(first);
    const signedUp = await post(first.baseUrl, "/api/auth/sign-up/email", {
      email: `admin-${Date.now()}@example.com`,
      password: "correct horse battery",
      name: "Admin",
    });
    expect(signedUp.status).toBe(200);
    const cookie = signedUp.cookies.map((line) => line.split(";")[0]).join("; ");
    await grantAdmin(database, (signedUp.body.user as { id: string }).id);
    const endpoint = await post(first.baseUrl, "/api/auth/admin/webhooks", { url: receiver.url, events: ["user.created"] }, cookie);
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
    receiver.secret = endpoint.body.secret as string;
    const deliveries = () => db.prisma.webhookDelivery.findMany({ where: { endpointId: endpoint.body.id as string } });

    await receiver.down();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await enqueueWebhook(db.prisma, "user.created", { id: `before-${i}` }));
    await until(
      async () => {
        const rows = await deliveries();
        return rows.length === 5 && rows.every((d) => d.attempts >= 2 && d.state === "pending");
      },
      30_000,
      "the first instance's failed attempts",
    );
    expect(await first.stop()).toBe(0);
    running.splice(running.indexOf(first), 1);
    expect((await deliveries()).map((d) => d.state)).toEqual(Array(5).fill("pending"));

    // Events written while no instance runs wait in the outbox.
    for (let i = 0; i < 2; i++) ids.push(await enqueueWebhook(db.prisma, "user.created", { id: `between-${i}` }));
    await receiver.up();
    const second = await startIdentity(database);
    running.push(second);
    await until(
      async () => {
        const rows = await deliveries();
        return rows.length === 7 && rows.every((d) => d.state === "succeeded");
      },
      30_000,
      "the second instance's deliveries",
    );
    expect([...receiver.accepted()].sort()).toEqual([...ids].sort());
    expect(receiver.received.filter((r) => r.refused)).toEqual([]);
    expect((await deliveries()).filter((d) => d.attempts >= 3)).toHaveLength(5);
  });
});
