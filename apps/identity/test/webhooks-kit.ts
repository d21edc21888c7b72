import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createDb } from "@app/db";
import type { TestDatabase } from "@app/db/testing";
import type { Express } from "express";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import request from "supertest";
import { expect } from "vitest";
import { signUp } from "./kit.js";

// The webhook tests' parts: a receiver (a real node:http server) that verifies every request with
// the `standardwebhooks` package, and an admin of identity, as `pnpm admin:grant` makes one.

/** Short schedules, so a test sees retries, failures and restarts in seconds. */
export const FAST_WEBHOOKS = {
  WEBHOOK_RETRY_BASE_MS: "200",
  WEBHOOK_RETRY_MAX_MS: "800",
  WEBHOOK_POLL_INTERVAL_MS: "500",
  WEBHOOK_TIMEOUT_MS: "2000",
} as const;

/** One request the receiver took. */
export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** The payload, when the signature verified. */
  payload: { type: string; timestamp: string; data: Record<string, unknown> } | undefined;
  /** Why verification failed, when it did. */
  refused?: string;
  /** What the receiver answered. */
  status: number;
}

/** A webhook receiver on a loopback port that can go down (its port closed) and come back on it. */
export interface Receiver {
  url: string;
  /** Every request, in arrival order. */
  received: Received[];
  /** The secret it verifies with (set once the endpoint is registered). */
  secret: string | undefined;
  /** The status it answers verified requests with (default 204). */
  status: number;
  /** The `webhook-id`s it accepted (verified and answered 2xx). */
  accepted(): string[];
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

function header(headers: IncomingHttpHeaders, name: string): string {
  const value = headers[name];
  return Array.isArray(value) ? value.join(",") : (value ?? "");
}

/** Starts a receiver; `path` is where it listens for webhooks. */
export async function startReceiver(path = "/hooks"): Promise<Receiver> {
  let server: Server | undefined;
  let port = 0;
  const receiver: Receiver = {
    url: "",
    received: [],
    secret: undefined,
    status: 204,
    accepted: () => receiver.received.filter((r) => r.payload && r.status < 300).map((r) => r.id),
    async down() {
      const open = server;
      server = undefined;
      if (!open) return;
      open.closeAllConnections();
      await new Promise<void>((resolve) => open.close(() => resolve()));
    },
    async up() {
      if (server) return;
      const next = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (chunk: Buffer) => chunks.push(chunk));
        req.on("end", () => {
          const body = Buffer.concat(chunks).toString("utf8");
          const entry: Received = {
            id: header(req.headers, "webhook-id"),
            timestamp: header(req.headers, "webhook-timestamp"),
            signature: header(req.headers, "webhook-signature"),
            body,
            payload: undefined,
            status: 401,
          };
          try {
            if (req.url !== path || req.method !== "POST") throw new WebhookVerificationError(`unexpected ${req.method} ${req.url}`);
            if (!receiver.secret) throw new WebhookVerificationError("no secret yet");
            entry.payload = new Webhook(receiver.secret).verify(body, {
              "webhook-id": entry.id,
              "webhook-timestamp": entry.timestamp,
              "webhook-signature": entry.signature,
            }) as Received["payload"];
            entry.status = receiver.status;
          } catch (error) {
            entry.refused = error instanceof Error ? error.message : String(error);
          }
          receiver.received.push(entry);
          res.writeHead(entry.status).end();
        });
      });
      await new Promise<void>((resolve) => next.listen(port, "127.0.0.1", resolve));
      port = (next.address() as AddressInfo).port;
      server = next;
      receiver.url = `http://127.0.0.1:${port}${path}`;
    },
    close: () => receiver.down(),
  };
  await receiver.up();
  return receiver;
}

/** Gives the user the API's admin role, as `pnpm admin:grant` does (the admin URL writes user_role). */
export async function grantAdmin(database: TestDatabase, userId: string): Promise<void> {
  const admin = createDb(database.url, { max: 1 });
  try {
    await admin.pool.query(`INSERT INTO user_role (user_id, role) VALUES ($1, 'admin') ON CONFLICT DO NOTHING`, [userId]);
  } finally {
    await admin.close();
  }
}

/** A signed-up admin of `app`: its session cookie and id. */
export async function signUpAdmin(app: Express, database: TestDatabase): Promise<{ cookie: string; id: string }> {
  const { cookie, user } = await signUp(app);
  await grantAdmin(database, user.id);
  return { cookie, id: user.id };
}

/** Registers an endpoint through the route and answers its view with the secret. */
export async function registerEndpoint(
  app: Express,
  cookie: string,
  url: string,
  events: string[],
): Promise<{ id: string; secret: string; url: string; events: string[] }> {
  const res = await request(app).post("/api/auth/admin/webhooks").set("cookie", cookie).send({ url, events });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; secret: string; url: string; events: string[] };
}

/** Polls `check` until it answers true (every 50 ms, at most `timeoutMs`). */
export async function until(check: () => Promise<boolean> | boolean, timeoutMs = 20_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
