import { randomUUID } from "node:crypto";
import { mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { createDb, type Db } from "@app/db";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ORPHAN_GRACE_MS } from "../src/uploads/file-store.js";
import { type IdentityStub, startIdentityStub } from "./fixtures/identity-stub.js";
import { eventually } from "./helpers.js";
import { type ApiProcess, assertBuilt, spawnApi, stopApi } from "./spawn-api.js";

// Upload files on disk against the processes that write them, on one directory shared by API
// processes (real PostgreSQL): nothing cut off or orphaned stays, and nothing live is swept.
let stub: IdentityStub;
let database: TestDatabase;
let owner: Db;
let uploadDir: string;
const running: ApiProcess[] = [];

beforeAll(async () => {
  assertBuilt();
  stub = await startIdentityStub();
  database = await createTestDatabase();
  owner = createDb(database.url, { max: 2 });
  uploadDir = await mkdtemp(path.join(os.tmpdir(), "api-sweep-"));
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((api) => stopApi(api, "SIGKILL")));
});
afterAll(async () => {
  await owner?.close();
  await database?.drop();
  await stub?.close();
  if (uploadDir) await rm(uploadDir, { recursive: true, force: true });
});

async function start(env: Record<string, string> = {}): Promise<ApiProcess> {
  const api = await spawnApi({
    DATABASE_URL: database.apiUrl,
    IDENTITY_URL: stub.url,
    BASE_URL: stub.baseUrl,
    UPLOAD_DIR: uploadDir,
    DATA_ENCRYPTION_KEY: "upload-sweep-test-key-0123456789abcdef",
    SHUTDOWN_DRAIN_MS: "300",
    LOG_LEVEL: "info",
    ...env,
  });
  running.push(api);
  return api;
}

async function bearer(): Promise<string> {
  const user = { id: randomUUID(), email: `s-${randomUUID()}@example.com`, name: "S" };
  await owner.prisma.user.create({ data: user });
  return `Bearer ${await stub.mint(user)}`;
}

const partials = async () => (await readdir(uploadDir)).filter((n) => n.endsWith(".partial"));
const BOUNDARY = "----sweep";
const FILE_BYTES = 64 * 1024;

/** An upload whose body arrives in two halves: the first now, the rest on `finish()`. */
async function halfUpload(api: ApiProcess, authorization: string) {
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="slow.txt"\r\nContent-Type: text/plain\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const body = Buffer.concat([head, Buffer.alloc(FILE_BYTES, "x"), tail]);
  const socket = net.connect(Number(new URL(api.url).port), "127.0.0.1");
  socket.on("error", () => undefined);
  const chunks: Buffer[] = [];
  socket.on("data", (c: Buffer) => chunks.push(c));
  await new Promise<void>((resolve) => socket.once("connect", resolve));
  socket.write(
    `POST /api/uploads HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${authorization}\r\n` +
      `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${body.length}\r\n\r\n`,
  );
  const half = head.length + FILE_BYTES / 2;
  socket.write(body.subarray(0, half));
  return {
    finish: async () => {
      socket.write(body.subarray(half));
      await eventually(() => Buffer.concat(chunks).toString().includes("\r\n\r\n{"), 10_000);
      const text = Buffer.concat(chunks).toString();
      socket.destroy();
      return { status: Number(text.slice(9, 12)), json: JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)) as { id: string } };
    },
    drop: () => socket.destroy(),
  };
}

/** A partial file named for an instance that never ran (its lease is missing): garbage for any sweep. */
async function plantGarbage(): Promise<string> {
  const name = `${randomUUID()}.0123456789abcdef.partial`;
  await writeFile(path.join(uploadDir, name), "garbage");
  return name;
}

describe("the upload directory across API processes", () => {
  it("an upload cut by an orderly stop leaves no partial file, and the next start sweeps what a killed process left", async () => {
    const first = await start();
    const cut = await halfUpload(first, await bearer());
    await eventually(async () => (await partials()).length === 1);
    expect(await stopApi(first, "SIGTERM")).toBe(0);
    cut.drop();
    expect(await partials()).toEqual([]);

    // A process killed mid-upload cannot clean up: the next start, seconds later, sweeps its file.
    const second = await start();
    const killed = await halfUpload(second, await bearer());
    await eventually(async () => (await partials()).length === 1);
    await stopApi(second, "SIGKILL");
    killed.drop();
    expect(await partials()).toHaveLength(1);
    await start();
    expect(await partials()).toEqual([]);
  }, 60_000);

  it("keeps a live upload of one process through another's start and periodic sweeps, then completes it", async () => {
    const writer = await start();
    const live = await halfUpload(writer, await bearer());
    await eventually(async () => (await partials()).length === 1);
    const [inFlight] = await partials();
    await start({ PURGE_INTERVAL_MS: "100" });
    // Two sweeps on the other process at least (each removes a planted garbage file).
    for (let round = 0; round < 2; round += 1) {
      const garbage = await plantGarbage();
      await eventually(async () => !(await readdir(uploadDir)).includes(garbage), 10_000);
    }
    expect(await partials()).toEqual([inFlight]);
    const done = await live.finish();
    expect(done.status).toBe(201);
    expect(await readdir(uploadDir)).toContain(done.json.id);
  }, 60_000);

  it("sweeps a complete file whose row disappeared, and keeps one whose row is there", async () => {
    const api = await start({ PURGE_INTERVAL_MS: "100" });
    const auth = await bearer();
    const ids: string[] = [];
    for (const name of ["gone.txt", "kept.txt"]) {
      const form = new FormData();
      form.append("file", new Blob([name], { type: "text/plain" }), name);
      const res = await fetch(`${api.url}/api/uploads`, { method: "POST", headers: { authorization: auth }, body: form });
      expect(res.status).toBe(201);
      ids.push(((await res.json()) as { id: string }).id);
    }
    const [gone = "", kept = ""] = ids;
    // The row goes without the API (as a cascade from identity's user row would), long after the upload.
    await owner.prisma.upload.delete({ where: { id: gone } });
    const past = new Date(Date.now() - ORPHAN_GRACE_MS - 60_000);
    for (const id of ids) await utimes(path.join(uploadDir, id), past, past);
    await eventually(async () => !(await readdir(uploadDir)).includes(gone), 10_000);
    expect(await readdir(uploadDir)).toContain(kept);
    const download = await fetch(`${api.url}/api/uploads/${kept}`, { headers: { authorization: auth } });
    expect(await download.text()).toBe("kept.txt");
  }, 60_000);
});
