/** Shared test setup: a migrated database, the identity stub, and the API on a real HTTP server. */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { createDb } from "@app/db";
import { type CountedDb, createCountedDb, createTestDatabase, type TestDatabase } from "@app/db/testing";
import { createLogger } from "@app/http-kit";
import { type ApiApp, type ApiDeps, createApp } from "../src/app.js";
import { type ApiConfig, testConfig } from "../src/config.js";
import { createHttpServer } from "../src/http-server.js";
import { type IdentityStub, type StubUser, startIdentityStub } from "./fixtures/identity-stub.js";

/** A running API for one test file. */
export interface TestApi {
  url: string;
  api: ApiApp;
  /** The API's own connection (database role auth_api, as in production). */
  db: CountedDb;
  /** The database's admin URL (identity's tables included), for seeding rows across the boundary. */
  adminUrl: string | undefined;
  /** Runs `fn` and returns the SQL text of every statement the API's pool sent meanwhile. */
  statementsOf(fn: () => Promise<unknown>): Promise<string[]>;
  config: ApiConfig;
  stub: IdentityStub;
  logs: string[];
  server: Server;
  /** Inserts a user row and returns it with a bearer header for it. */
  user(overrides?: Partial<StubUser>): Promise<StubUser & { auth: { authorization: string }; token: string }>;
  close(): Promise<void>;
}

/** Options of {@link startTestApi}. */
export interface TestApiOptions {
  env?: Record<string, string>;
  /** Use an unreachable database instead of a fresh one (no migrations, no bus). */
  unreachableDatabase?: boolean;
  deps?: Partial<Omit<ApiDeps, "config" | "db" | "logger">>;
  /** Level of the captured logger (default info). */
  logLevel?: string;
  /** The public base URL (BASE_URL, the stub's issuer and audience); default the stub's. */
  baseUrl?: string;
  /** Port to listen on (default a free one): with `baseUrl` on it, the API is its own base URL. */
  port?: number;
}

/** Starts everything a test file needs; `close()` tears it all down. */
export async function startTestApi(options: TestApiOptions = {}): Promise<TestApi> {
  const stub = await startIdentityStub(options.baseUrl);
  const database: TestDatabase | undefined = options.unreachableDatabase ? undefined : await createTestDatabase();
  // The API connects as its own role: identity's tables are refused, as in production.
  const databaseUrl = database?.apiUrl ?? "postgresql://nobody@127.0.0.1:1/unreachable";
  const uploadDir = await mkdtemp(path.join(os.tmpdir(), "api-uploads-"));
  const config = testConfig({
    DATABASE_URL: databaseUrl,
    IDENTITY_URL: stub.url,
    BASE_URL: stub.baseUrl,
    UPLOAD_DIR: uploadDir,
    LOG_LEVEL: "info",
    ...options.env,
  });
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const logger = createLogger({ name: "api-test", level: options.logLevel ?? "info", destination });
  const db = createCountedDb(databaseUrl, { connectionTimeoutMillis: 1_000 });
  // Statement texts, recorded only inside statementsOf (registered before any connection opens).
  let recording: string[] | undefined;
  db.pool.on("connect", (client) => {
    const send = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const first = args[0] as string | { text?: string };
      recording?.push(typeof first === "string" ? first : String(first?.text));
      return send(...args);
    };
  });
  // Users are identity's rows: tests create them through the admin URL, as sign-up would.
  const seed = database ? createDb(database.url, { max: 1 }) : undefined;
  const api = createApp({ config, db, logger, ...options.deps });
  const server = createHttpServer(api, config);
  if (!options.unreachableDatabase) await api.start();
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    api,
    db,
    adminUrl: database?.url,
    async statementsOf(fn) {
      const seen: string[] = [];
      recording = seen;
      try {
        await fn();
      } finally {
        recording = undefined;
      }
      return seen;
    },
    config,
    stub,
    logs,
    server,
    async user(overrides = {}) {
      const u: StubUser = { id: randomUUID(), email: `u-${randomUUID()}@example.com`, name: "Test User", ...overrides };
      await seed?.prisma.user.create({ data: u });
      const token = await stub.mint(u);
      return { ...u, token, auth: { authorization: `Bearer ${token}` } };
    },
    async close() {
      await api.shutdown("test over");
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await api.close();
      await db.close();
      await seed?.close();
      await stub.close();
      await database?.drop();
      await rm(uploadDir, { recursive: true, force: true });
    },
  };
}

/** Reads an SSE response until `until` returns true for the parsed events (or the timeout passes). */
export async function readSse(
  response: Response,
  until: (events: SseEvent[]) => boolean,
  timeoutMs = 5_000,
): Promise<{ events: SseEvent[]; raw: string }> {
  const body = response.body;
  if (!body) throw new Error("no body");
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let raw = "";
  const timer = setTimeout(() => void reader.cancel(), timeoutMs);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      raw += decoder.decode(value, { stream: true });
      if (until(parseSse(raw))) break;
    }
  } finally {
    clearTimeout(timer);
    await reader.cancel().catch(() => undefined);
  }
  return { events: parseSse(raw), raw };
}

/** One parsed SSE event. */
export interface SseEvent {
  id?: string;
  event?: string;
  data?: string;
}

/** Parses SSE text into events (comments and retry lines skipped). */
export function parseSse(raw: string): SseEvent[] {
  return raw
    .split("\n\n")
    .filter((block) => block.includes("data:"))
    .map((block) => {
      const e: SseEvent = {};
      for (const line of block.split("\n")) {
        if (line.startsWith("id: ")) e.id = line.slice(4);
        else if (line.startsWith("event: ")) e.event = line.slice(7);
        else if (line.startsWith("data: ")) e.data = line.slice(6);
      }
      return e;
    });
}

/**
 * Counts the occurrences of `mark` (by default an SSE `event: message.created` line) in a raw
 * transcript as its chunks arrive, without keeping or re-reading it (a mark split between two
 * chunks is counted once).
 */
export function countEvents(mark = "event: message.created"): { add(chunk: Buffer): void; readonly count: number } {
  let carry = "";
  let count = 0;
  return {
    add(chunk) {
      const text = carry + chunk.toString("latin1");
      count += text.split(mark).length - 1;
      carry = text.slice(-(mark.length - 1));
    },
    get count() {
      return count;
    },
  };
}

/** A port free on 127.0.0.1 right now (for a server whose base URL must be known before it starts). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Polls `check` until it is truthy (bounded). */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 5_000): Promise<NonNullable<T>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}
