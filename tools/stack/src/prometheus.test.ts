import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { KEY_SET_CHANNEL, SET_AUTH_JWT_HEADER } from "@app/contracts";
import { freePort } from "@app/db/embedded";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { WebSocket } from "ws";
import { launchStack, type RunningStack } from "./launch.js";

// The real Prometheus (Debian's package; .ci/run installs it) scrapes a running stack's metrics
// listeners every second; the series are asked of its HTTP API after a sign-in and API calls. It
// also evaluates the example alert rules of docs/operations.md#metrics against them.

/** Debian's Prometheus unless PROMETHEUS_PATH names another. */
const PROMETHEUS = process.env.PROMETHEUS_PATH ?? "/usr/bin/prometheus";

/** The rules block of docs/operations.md's metrics section (alert-rules.test.ts checks it with promtool). */
function documentedRules(): string {
  const doc = readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), "../../../docs/operations.md"), "utf8");
  const section = doc.slice(doc.indexOf("\n## Metrics\n"));
  const block = /```yaml\n(groups:[\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error("docs/operations.md#metrics has no alert rules block");
  return block;
}

let database: TestDatabase;
let stack: RunningStack;
let prometheus: ChildProcess | undefined;
let prometheusUrl: string;
let dir: string;
const lines: string[] = [];

beforeAll(async () => {
  if (!existsSync(PROMETHEUS)) throw new Error(`no Prometheus at ${PROMETHEUS}: apt-get install -y prometheus, or set PROMETHEUS_PATH`);
  database = await createTestDatabase();
  stack = await launchStack({
    databaseUrl: database.url,
    port: 0,
    authSecret: randomBytes(32).toString("base64url"),
    dataEncryptionKey: randomBytes(32).toString("base64url"),
    env: {
      UPLOAD_DIR: `/tmp/stack-prometheus-uploads-${process.pid}`,
      // Two failed sign-ins per account and address, then 429; mail to a port nobody listens on.
      RATE_LIMIT_ACCOUNT_MAX: "2",
      SMTP_URL: `smtp://127.0.0.1:${await freePort()}`,
    },
    metrics: true,
    onLine: (name, line) => lines.push(`${name} ${line}`),
  });
  dir = await mkdtemp(path.join(os.tmpdir(), "prometheus-"));
  const jobs = ["identity", "api"].map((job) => ({
    job_name: job,
    static_configs: [{ targets: stack.metrics.filter((m) => m.name.startsWith(`${job}-`)).map((m) => m.target) }],
  }));
  // JSON is YAML: the generated scrape configuration, scraping and evaluating every second.
  const config = {
    global: { scrape_interval: "1s", scrape_timeout: "1s", evaluation_interval: "1s" },
    rule_files: [path.join(dir, "rules.yml")],
    scrape_configs: jobs,
  };
  await writeFile(path.join(dir, "prometheus.yml"), JSON.stringify(config));
  await writeFile(path.join(dir, "rules.yml"), documentedRules());
  const port = await freePort();
  prometheusUrl = `http://127.0.0.1:${port}`;
  prometheus = spawn(
    PROMETHEUS,
    [
      `--config.file=${path.join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${path.join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  prometheus.stderr?.on("data", (d: Buffer) => lines.push(`prometheus ${d.toString().trim()}`));
  await vi.waitFor(
    async () => {
      if (prometheus?.exitCode !== null) throw new Error(`prometheus exited:\n${lines.join("\n")}`);
      expect((await fetch(`${prometheusUrl}/-/ready`)).status).toBe(200);
    },
    { timeout: 30_000, interval: 200 },
  );
});

afterAll(async () => {
  if (prometheus && prometheus.exitCode === null) {
    const exited = new Promise((r) => prometheus?.once("exit", r));
    prometheus.kill("SIGTERM");
    await exited;
  }
  await stack?.stop();
  await database?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** One instant query: each series' labels and value. */
async function query(promql: string): Promise<{ metric: Record<string, string>; value: number }[]> {
  const res = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = (await res.json()) as {
    status: string;
    error?: string;
    data: { result: { metric: Record<string, string>; value: [number, string] }[] };
  };
  if (body.status !== "success") throw new Error(`${promql}: ${body.error}`);
  return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
}

/** Waits until Prometheus has scraped a value of `promql` that satisfies `check` (the scrape runs every second). */
async function eventually(promql: string, check: (value: number) => boolean = (v) => v >= 1): Promise<number> {
  let seen: number | undefined;
  await vi.waitFor(
    async () => {
      const result = await query(`sum(${promql})`);
      seen = result[0]?.value;
      expect(seen !== undefined && check(seen), `${promql} = ${seen}`).toBe(true);
    },
    { timeout: 20_000, interval: 250 },
  );
  return seen as number;
}

const json = { "content-type": "application/json" };

async function signedIn(): Promise<{ jwt: string; email: string }> {
  const email = `metrics-${randomBytes(4).toString("hex")}@example.com`;
  const password = "correct horse battery";
  const up = await fetch(`${stack.baseUrl}/api/auth/sign-up/email`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ email, password, name: "M" }),
  });
  expect(up.status).toBe(200);
  const signIn = await fetch(`${stack.baseUrl}/api/auth/sign-in/email`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ email, password }),
  });
  expect(signIn.status).toBe(200);
  const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const session = await fetch(`${stack.baseUrl}/api/auth/get-session`, { method: "POST", headers: { cookie } });
  expect(session.status).toBe(200);
  return { jwt: session.headers.get(SET_AUTH_JWT_HEADER) ?? "", email };
}

describe("Prometheus scrapes identity and the API", () => {
  it("finds every target up and the series of a sign-in and a few API calls", async () => {
    expect(stack.metrics.map((m) => m.name)).toEqual(["identity-1", "api-1"]);
    await eventually('up{job="identity"}', (v) => v === 1);
    await eventually('up{job="api"}', (v) => v === 1);

    const { jwt } = await signedIn();
    const auth = { authorization: `Bearer ${jwt}` };
    const created = await fetch(`${stack.baseUrl}/api/tasks`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ title: "scraped" }),
    });
    expect(created.status).toBe(201);
    const taskId = ((await created.json()) as { data: { id: string } }).data.id;
    for (let i = 0; i < 3; i += 1) expect((await fetch(`${stack.baseUrl}/api/tasks`, { headers: auth })).status).toBe(200);
    expect((await fetch(`${stack.baseUrl}/api/tasks`)).status).toBe(401);
    expect((await fetch(`${stack.baseUrl}/api/tasks/${taskId}`, { headers: { authorization: "Bearer not-a-jwt" } })).status).toBe(401);
    // Never through the gateway: /metrics is not one of its routes.
    expect((await fetch(`${stack.baseUrl}/metrics`)).status).toBe(404);

    // Request durations by route template and status class; the task's id appears in no label.
    await eventually('http_request_duration_seconds_count{job="api",method="GET",route="/api/tasks",status_class="2xx"}', (v) => v >= 3);
    await eventually('http_request_duration_seconds_count{job="api",route="/api/tasks",status_class="4xx"}');
    await eventually('http_request_duration_seconds_count{job="api",route="/api/tasks/:id",status_class="4xx"}');
    await eventually('http_request_duration_seconds_count{job="identity",route="/api/auth/sign-in/email",status_class="2xx"}');
    expect(await query(`http_request_duration_seconds_count{route=~".*${taskId}.*"}`)).toEqual([]);
    // Verification outcomes by the verifier's code, and the key set fetches behind them.
    await eventually('api_token_verifications_total{outcome="ok"}', (v) => v >= 4);
    await eventually('api_token_verifications_total{outcome="missing_token"}');
    await eventually('api_token_verifications_total{outcome="malformed_token"}');
    await eventually('api_key_set_refreshes_total{outcome="ok"}');
    // Identity announced the key it made on its first start.
    await eventually('identity_key_set_pushes_total{outcome="sent"}');
    await eventually('identity_sign_ins_total{method="password",outcome="success"}');
    const age = await eventually("identity_signing_key_age_seconds", (v) => v >= 0);
    expect(age).toBeLessThan(3600);
    // Pool use, event-loop delay and the process series of both services.
    for (const job of ["identity", "api"]) {
      await eventually(`db_pool_connections{job="${job}"}`);
      await eventually(`db_pool_max_connections{job="${job}"}`);
      await eventually(`nodejs_eventloop_lag_p99_seconds{job="${job}"}`, (v) => v > 0);
      await eventually(`process_resident_memory_bytes{job="${job}"}`, (v) => v > 0);
    }
  });

  it("counts open SSE streams and WebSockets, and key set pushes the API receives", async () => {
    const { jwt } = await signedIn();
    const auth = { authorization: `Bearer ${jwt}` };
    const created = await fetch(`${stack.baseUrl}/api/tasks`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ title: "streamed" }),
    });
    const taskId = ((await created.json()) as { data: { id: string } }).data.id;
    const streamAbort = new AbortController();
    const stream = await fetch(`${stack.baseUrl}/api/tasks/${taskId}/stream`, { headers: auth, signal: streamAbort.signal });
    expect(stream.status).toBe(200);
    const socket = new WebSocket(`${stack.baseUrl.replace("http:", "ws:")}/api/ws?token=${jwt}`);
    await new Promise((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("error", reject);
    });
    try {
      await eventually('api_sse_streams_open{job="api"}', (v) => v === 1);
      await eventually('api_websockets_open{job="api"}', (v) => v === 1);
    } finally {
      streamAbort.abort();
      socket.close();
    }
    await eventually('api_sse_streams_open{job="api"}', (v) => v === 0);
    await eventually('api_websockets_open{job="api"}', (v) => v === 0);

    // An announcement on the key set channel, as identity makes on a rotation: the API refetches.
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query("SELECT pg_notify($1, $2)", [KEY_SET_CHANNEL, JSON.stringify({ event: "rotated", kids: ["k"] })]);
    } finally {
      await client.end();
    }
    await eventually('api_key_set_pushes_total{outcome="refreshed"}');
  });

  it("counts rate-limit refusals by limiter and mail failures, and the documented MailFailing alert fires", async () => {
    const { email } = await signedIn();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      const wrong = await fetch(`${stack.baseUrl}/api/auth/sign-in/email`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({ email, password: "not the password" }),
      });
      statuses.push(wrong.status);
    }
    expect(statuses).toEqual([401, 401, 429]);
    await eventually('identity_rate_limit_refusals_total{limiter="sign-in-account-ip"}', (v) => v === 1);
    await eventually('identity_rate_limit_refusals_total{limiter="mail-ip"}', (v) => v === 0);

    const reset = await fetch(`${stack.baseUrl}/api/auth/request-password-reset`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ email }),
    });
    expect(reset.status).toBe(200);
    await eventually('identity_mail_send_failures_total{final="false"}');
    await eventually('ALERTS{alertname="MailFailing",alertstate="firing"}', (v) => v === 1);
  });

  it("evaluates the documented alert rules without error", async () => {
    await vi.waitFor(
      async () => {
        const body = (await (await fetch(`${prometheusUrl}/api/v1/rules`)).json()) as {
          data: { groups: { rules: { name: string; health: string; lastError?: string }[] }[] };
        };
        const rules = body.data.groups.flatMap((g) => g.rules);
        expect(rules.map((r) => r.name)).toEqual(expect.arrayContaining(["HighUnauthorizedRate", "KeySetRefreshFailing", "MailFailing"]));
        expect(rules.filter((r) => r.health !== "ok")).toEqual([]);
      },
      { timeout: 20_000, interval: 250 },
    );
  });
});
