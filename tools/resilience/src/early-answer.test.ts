import { freePort } from "@app/db/embedded";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { ENTRY } from "@app/stack";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Account, secret, signUp } from "./client.js";
import { type Cluster, Service, startCluster } from "./cluster.js";

// A refused upload through the real gateway in front of the real API: the API answers 415 as soon
// as it sees the file's type (apps/api/src/uploads/multipart.ts), possibly before the client finished
// sending. The client must get that complete answer every time, never a reset (EPIPE): the gateway
// keeps the client's connection and reads the rest of the body (apps/gateway/src/early-answer.ts).
const UPLOADS = 250;

let database: TestDatabase;
let cluster: Cluster;
let gateway: Service;
let account: Account;

beforeAll(async () => {
  database = await createTestDatabase();
  cluster = await startCluster({ databaseUrl: database.url, authSecret: secret(), dataEncryptionKey: secret() });
  gateway = new Service({
    name: "gateway",
    entry: ENTRY.gateway,
    port: await freePort(),
    env: {
      PATH: process.env.PATH ?? "",
      LOG_LEVEL: "info",
      IDENTITY_UPSTREAMS: cluster.identities.map((s) => s.url).join(","),
      API_UPSTREAMS: cluster.apis.map((s) => s.url).join(","),
    },
    onLine: (name, line) => cluster.lines.push(`${name} ${line}`),
  });
  await gateway.start();
  account = await signUp(gateway.url);
}, 90_000);
afterAll(async () => {
  await gateway?.stop();
  await cluster?.stop();
  await database?.drop();
});

/** One upload of `bytes` bytes typed `type`: "status code" or "network_error cause". */
async function upload(bytes: number, type: string): Promise<{ outcome: string }> {
  const form = new FormData();
  form.append("file", new Blob([new Uint8Array(bytes).fill(120)], { type }), "a.exe");
  try {
    const res = await fetch(`${gateway.url}/api/uploads`, {
      method: "POST",
      headers: { authorization: `Bearer ${account.jwt}` },
      body: form,
      signal: AbortSignal.timeout(20_000),
    });
    const body = (await res.json()) as { error?: { code: string } };
    return { outcome: `${res.status} ${body.error?.code ?? "ok"}` };
  } catch (error) {
    const cause = (error as Error & { cause?: { code?: string } }).cause;
    return { outcome: `network_error ${cause?.code ?? (error as Error).message}` };
  }
}

describe("a refused upload answered before its body ended, through the gateway", () => {
  it(`reaches the client as a complete 415 in each of ${UPLOADS} uploads`, async () => {
    const outcomes = new Map<string, number>();
    for (let i = 0; i < UPLOADS; i += 1) {
      const { outcome } = await upload(1, "application/x-msdownload");
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
    expect(Object.fromEntries(outcomes)).toEqual({ "415 unsupported_media_type": UPLOADS });
  }, 120_000);

  it("answers a refused body larger than the gateway reads after an answer (16 MiB) with a complete 415", async () => {
    const { outcome } = await upload(20 * 1024 * 1024, "application/x-msdownload");
    expect(outcome).toBe("415 unsupported_media_type");
  }, 60_000);
});
