import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";

const PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** Child processes import the built package (run `pnpm build` first), from the package directory. */
const DIST = path.join(PACKAGE, "dist/index.js");
const scratch = mkdtempSync(path.join(tmpdir(), "telemetry-"));

/** An OTLP/HTTP receiver: every body POSTed to /v1/traces, as the exporter sent it. */
const received: { contentType: string | undefined; body: string }[] = [];
const receiver = http.createServer((req, res) => {
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (chunk: string) => {
    body += chunk;
  });
  req.on("end", () => {
    if (req.method === "POST" && req.url === "/v1/traces") received.push({ contentType: req.headers["content-type"], body });
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});
let endpoint = "";

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
beforeEach(() => {
  received.length = 0;
});
afterAll(async () => {
  await new Promise((resolve) => receiver.close(resolve));
  rmSync(scratch, { recursive: true, force: true });
});

/** Runs `body` (an ES module's text, after startTracing) in a fresh Node process; resolves with its stdout. */
async function child(body: string, env: Record<string, string | undefined>, loadLog?: string): Promise<string> {
  const hook = loadLog
    ? `import { register } from "node:module";
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(RECORD_RESOLVED)}`)}, { data: { log: ${JSON.stringify(loadLog)} } });`
    : "";
  const script = `${hook}
const { startTracing, shutdownTracing } = await import(${JSON.stringify(DIST)});
await startTracing({ serviceName: "probe", loadUrlRedactor: async () => (url) => url.replace(/token=[^&#]*/g, "token=[REDACTED]") });
${body}`;
  const proc = spawn(process.execPath, ["--input-type=module", "-e", script], {
    cwd: PACKAGE,
    env: { PATH: process.env.PATH, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  proc.stdout.on("data", (c: Buffer) => {
    out += c.toString();
  });
  proc.stderr.on("data", (c: Buffer) => {
    err += c.toString();
  });
  const code = await new Promise<number | null>((resolve) => proc.once("exit", resolve));
  if (code !== 0) throw new Error(`child exited ${code}: ${err}`);
  return out;
}

/** A resolve hook (module.register) that writes every URL the ES module loader resolves to a file. */
const RECORD_RESOLVED = `import { appendFileSync } from "node:fs";
let log;
export function initialize(data) { log = data.log; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(log, result.url + "\\n");
  return result;
}`;

/** Prints the CommonJS files loaded so far. */
const PRINT_REQUIRED = `import { createRequire } from "node:module";
console.log(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));`;

/** Every module a child loaded: what the ES module loader resolved and the CommonJS files it printed. */
async function modulesLoaded(env: Record<string, string | undefined>): Promise<string[]> {
  const log = path.join(scratch, `resolved-${Object.keys(env).length}-${Date.now()}.log`);
  const out = await child(PRINT_REQUIRED, env, log);
  const resolved = readFileSync(log, "utf8").split("\n").filter(Boolean);
  return [...resolved, ...(JSON.parse(out) as string[])];
}

/**
 * A server in the child and a request to it with a token in its query, by node:http and by
 * fetch. node:http is imported after startTracing, as the services import their modules.
 */
const REQUESTS = `const { default: http } = await import("node:http");
const server = http.createServer((req, res) => res.end("ok"));
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const base = "http://127.0.0.1:" + server.address().port;
await new Promise((resolve, reject) => http.get(base + "/by-http?token=s3cret-http&keep=1", (res) => res.resume().on("end", resolve)).on("error", reject));
await (await fetch(base + "/by-fetch?token=s3cret-fetch&keep=2")).text();
server.close();`;

interface ExportedSpan {
  name: string;
  kind: number;
  attributes: { key: string; value: { stringValue?: string } }[];
}

function spansOf(bodies: { body: string }[]): ExportedSpan[] {
  return bodies.flatMap(({ body }) => {
    const data = JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: ExportedSpan[] }[] }[] };
    return data.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
  });
}

describe("tracing off", () => {
  it("loads none of the SDK when OTEL_EXPORTER_OTLP_ENDPOINT is unset or OTEL_SDK_DISABLED is true", async () => {
    const off = await modulesLoaded({});
    expect(off.some((m) => m.endsWith("/telemetry/dist/index.js"))).toBe(true);
    expect(off.filter((m) => m.includes("@opentelemetry") || m.includes("import-in-the-middle"))).toEqual([]);
    const disabled = await modulesLoaded({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: "true" });
    expect(disabled.filter((m) => m.includes("@opentelemetry"))).toEqual([]);
    // The same probe sees the SDK once the variable is set.
    const on = await modulesLoaded({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
    expect(on.some((m) => m.includes("@opentelemetry/sdk-trace-node/"))).toBe(true);
  });
});

describe("tracing on", () => {
  it("exports the spans of node:http and fetch as OTLP JSON, with tokens in URLs redacted", async () => {
    await child(`${REQUESTS}\nawait shutdownTracing();`, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
    expect(received.length).toBeGreaterThan(0);
    expect(received.every((r) => r.contentType === "application/json")).toBe(true);
    const text = received.map((r) => r.body).join("\n");
    expect(text).not.toContain("s3cret");
    const urls = spansOf(received).flatMap((s) =>
      s.attributes.filter((a) => a.key.startsWith("url.") || a.key.startsWith("http.")).map((a) => `${a.key}=${a.value.stringValue}`),
    );
    // The node:http server span (query without `?`), and the fetch (undici) client span (with it).
    expect(urls).toEqual(expect.arrayContaining(["url.query=token=[REDACTED]&keep=1", "url.query=?token=[REDACTED]&keep=2"]));
    // The client spans of node:http and fetch.
    const full = urls.filter((u) => u.startsWith("url.full="));
    expect(full).toHaveLength(2);
    expect(full.every((u) => u.includes("token=[REDACTED]&keep="))).toBe(true);
  });

  it("sends the spans still in the batch when shutdownTracing runs before process.exit", async () => {
    // A batch delay longer than the test: only the shutdown can send them.
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: "600000" };
    await child(`${REQUESTS}\nprocess.exit(0);`, env);
    expect(received).toEqual([]);
    await child(`${REQUESTS}\nawait shutdownTracing();\nprocess.exit(0);`, env);
    // Two server spans, the node:http client span and the fetch one.
    expect(spansOf(received)).toHaveLength(4);
  });

  it("names the service from its argument unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES says otherwise", async () => {
    const serviceNames = async (env: Record<string, string>) => {
      received.length = 0;
      await child(`${REQUESTS}\nawait shutdownTracing();`, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, ...env });
      return received.flatMap(({ body }) => {
        const data = JSON.parse(body) as { resourceSpans: { resource: { attributes: ExportedSpan["attributes"] } }[] };
        return data.resourceSpans.map((r) => {
          const attrs = Object.fromEntries(r.resource.attributes.map((a) => [a.key, a.value.stringValue]));
          return `${attrs["service.name"]} ${attrs["deployment.environment.name"] ?? "-"}`;
        });
      });
    };
    expect(new Set(await serviceNames({}))).toEqual(new Set(["probe -"]));
    expect(new Set(await serviceNames({ OTEL_SERVICE_NAME: "renamed" }))).toEqual(new Set(["renamed -"]));
    expect(new Set(await serviceNames({ OTEL_RESOURCE_ATTRIBUTES: "service.name=other,deployment.environment.name=staging" }))).toEqual(
      new Set(["other staging"]),
    );
  });
});
