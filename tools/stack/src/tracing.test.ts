import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { SET_AUTH_JWT_HEADER } from "@app/contracts";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchStack, type RunningStack } from "./launch.js";

// Traces of a whole stack (identity, API, gateway processes) exported to a real OTLP/HTTP
// receiver: one request's spans form one trace across the gateway and the service behind it, and
// the service's access line carries its trace_id (docs/operations.md "Traces").

/** One span as OTLP/HTTP JSON carries it, with its service and its attributes flattened. */
interface Span {
  service: string;
  scope: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** 2: server, 3: client (OTLP's SpanKind). */
  kind: number;
  attributes: Record<string, string | number | boolean | undefined>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
}
interface OtlpExport {
  resourceSpans: {
    resource: { attributes: { key: string; value: OtlpValue }[] };
    scopeSpans: {
      scope: { name: string };
      spans: (Omit<Span, "service" | "scope" | "attributes" | "parentSpanId"> & {
        parentSpanId?: string;
        attributes: { key: string; value: OtlpValue }[];
      })[];
    }[];
  }[];
}

const SERVER = 2;
const CLIENT = 3;

/** Every body POSTed to /v1/traces, as the exporters sent it. */
const bodies: { contentType: string | undefined; text: string }[] = [];
const receiver = http.createServer((req, res) => {
  let text = "";
  req.setEncoding("utf8");
  req.on("data", (chunk: string) => {
    text += chunk;
  });
  req.on("end", () => {
    if (req.method === "POST" && req.url === "/v1/traces") bodies.push({ contentType: req.headers["content-type"], text });
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});

function attributeValue(value: OtlpValue): string | number | boolean | undefined {
  return value.stringValue ?? (value.intValue === undefined ? value.boolValue : Number(value.intValue));
}

function spans(): Span[] {
  return bodies.flatMap(({ text }) =>
    (JSON.parse(text) as OtlpExport).resourceSpans.flatMap((rs) => {
      const service = String(attributeValue(rs.resource.attributes.find((a) => a.key === "service.name")?.value ?? {}));
      return rs.scopeSpans.flatMap((ss) =>
        ss.spans.map((s) => ({
          service,
          scope: ss.scope.name,
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? "",
          name: s.name,
          kind: s.kind,
          attributes: Object.fromEntries(s.attributes.map((a) => [a.key, attributeValue(a.value)])),
        })),
      );
    }),
  );
}

/** Polls the receiver until `find` returns something (the exporters send every 100 ms here). */
async function waitFor<T>(find: () => T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > until) throw new Error(`no ${what} in ${bodies.length} exports after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

let database: TestDatabase;
let stack: RunningStack;
const lines: string[] = [];
/** Under CI=true Redis is there (.ci/run); elsewhere it is used when REDIS_URL names one. */
const redisUrl = process.env.REDIS_URL || (process.env.CI === "true" ? "redis://127.0.0.1:6379" : undefined);

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  database = await createTestDatabase();
  stack = await launchStack({
    databaseUrl: database.url,
    port: 0,
    authSecret: randomBytes(32).toString("base64url"),
    dataEncryptionKey: randomBytes(32).toString("base64url"),
    env: {
      LOG_LEVEL: "info",
      LOG_FORMAT: "json",
      UPLOAD_DIR: `/tmp/stack-tracing-uploads-${process.pid}`,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
      OTEL_BSP_SCHEDULE_DELAY: "100",
      ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    },
    onLine: (name, line) => lines.push(`${name} ${line}`),
    // Identity sends its mail to the development mailbox (dev-mail.ts): real SMTP.
    devMail: true,
  });
});
afterAll(async () => {
  await stack?.stop();
  await database?.drop();
  await new Promise((resolve) => receiver.close(resolve));
});

/** The access line a service wrote for the request sent with `requestId`. */
async function accessLine(service: string, requestId: string): Promise<Record<string, unknown>> {
  return waitFor(() => {
    for (const line of lines) {
      if (!line.startsWith(`${service}-`)) continue;
      const json = line.slice(line.indexOf(" ") + 1);
      if (!json.startsWith("{")) continue;
      const record = JSON.parse(json) as Record<string, unknown>;
      if (record.requestId === requestId && record.req !== undefined) return record;
    }
    return undefined;
  }, `${service} access line of ${requestId}`);
}

/**
 * The server span `service` exported for `path`, and its trace's spans: the gateway's server
 * span, the gateway's client span (its proxied request) and the service's server span.
 */
async function traceThroughGateway(service: string, method: string, path: string) {
  const serverSpan = await waitFor(
    () => spans().find((s) => s.service === service && s.kind === SERVER && s.attributes["url.path"] === path && s.name.startsWith(method)),
    `${service} server span of ${method} ${path}`,
  );
  const parent = await waitFor(() => spans().find((s) => s.spanId === serverSpan.parentSpanId), `parent of the ${service} server span`);
  const root = await waitFor(() => spans().find((s) => s.spanId === parent.parentSpanId), "parent of the gateway's client span");
  return { root, parent, serverSpan };
}

/** Spans of `service` under `ancestor` (any depth). */
function descendants(ancestor: Span): Span[] {
  const all = spans().filter((s) => s.traceId === ancestor.traceId);
  const below = new Set([ancestor.spanId]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const s of all)
      if (below.has(s.parentSpanId) && !below.has(s.spanId)) {
        below.add(s.spanId);
        grew = true;
      }
  }
  return all.filter((s) => s.spanId !== ancestor.spanId && below.has(s.spanId));
}

async function signUp(requestId: string) {
  const email = `trace-${randomBytes(4).toString("hex")}@example.com`;
  const password = "correct horse battery";
  const up = await fetch(`${stack.baseUrl}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-request-id": requestId },
    body: JSON.stringify({ email, password, name: "Trace" }),
  });
  expect(up.status).toBe(200);
  const signIn = await fetch(`${stack.baseUrl}/api/auth/sign-in/email`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  expect(signIn.status).toBe(200);
  const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const session = await fetch(`${stack.baseUrl}/api/auth/get-session`, { method: "POST", headers: { cookie } });
  expect(session.status).toBe(200);
  return { cookie, jwt: session.headers.get(SET_AUTH_JWT_HEADER) ?? "" };
}

describe("traces across the gateway and the services (OTLP/HTTP)", () => {
  it("makes one trace of a sign-up: gateway server → gateway client → identity server → its queries", async () => {
    const requestId = `trace-${randomBytes(6).toString("hex")}`;
    await signUp(requestId);
    const { root, parent, serverSpan } = await traceThroughGateway("identity", "POST", "/api/auth/sign-up/email");
    expect(root).toMatchObject({ service: "gateway", kind: SERVER, parentSpanId: "", traceId: serverSpan.traceId });
    expect(parent).toMatchObject({ service: "gateway", kind: CLIENT, traceId: serverSpan.traceId });
    // Express names the span after the route's template.
    expect(serverSpan.name).toBe("POST /api/auth/sign-up/email");
    const below = await waitFor(() => {
      const found = descendants(serverSpan);
      return found.some(
        (s) =>
          s.scope === "@opentelemetry/instrumentation-pg" && /^INSERT INTO "public"."user"/.test(String(s.attributes["db.query.text"])),
      )
        ? found
        : undefined;
    }, "identity's INSERT of the user under its server span");
    expect(below.every((s) => s.service === "identity")).toBe(true);
    expect(bodies.every((b) => b.contentType === "application/json")).toBe(true);
    const access = await accessLine("identity", requestId);
    expect(access.trace_id).toBe(serverSpan.traceId);
  });

  it("makes one trace of an API call, whose access line carries its trace_id", async () => {
    const { jwt } = await signUp(`trace-${randomBytes(6).toString("hex")}`);
    const requestId = `trace-${randomBytes(6).toString("hex")}`;
    const list = await fetch(`${stack.baseUrl}/api/tasks`, { headers: { authorization: `Bearer ${jwt}`, "x-request-id": requestId } });
    expect(list.status).toBe(200);
    const { root, parent, serverSpan } = await traceThroughGateway("api", "GET", "/api/tasks");
    expect(root).toMatchObject({ service: "gateway", kind: SERVER, parentSpanId: "" });
    expect(parent).toMatchObject({ service: "gateway", kind: CLIENT });
    expect(new Set([root.traceId, parent.traceId])).toEqual(new Set([serverSpan.traceId]));
    await waitFor(
      () => (descendants(serverSpan).some((s) => s.scope === "@opentelemetry/instrumentation-pg") ? true : undefined),
      "a query of the API under its server span",
    );
    expect((await accessLine("api", requestId)).trace_id).toBe(serverSpan.traceId);
  });

  it("traces the API's fetch of identity's signing keys (fetch, undici)", async () => {
    const fetchSpan = await waitFor(
      () =>
        spans().find(
          (s) =>
            s.service === "api" && s.scope === "@opentelemetry/instrumentation-undici" && /\/jwks/.test(String(s.attributes["url.full"])),
        ),
      "the API's JWKS fetch",
    );
    expect(fetchSpan.kind).toBe(CLIENT);
    const identitySide = await waitFor(
      () => spans().find((s) => s.service === "identity" && s.kind === SERVER && s.parentSpanId === fetchSpan.spanId),
      "identity's server span of the JWKS fetch",
    );
    expect(identitySide.traceId).toBe(fetchSpan.traceId);
  });

  it.skipIf(!redisUrl)("records Redis commands by name only, inside the request that ran them", async () => {
    await signUp(`trace-${randomBytes(6).toString("hex")}`);
    const redisSpan = await waitFor(
      () => spans().find((s) => s.service === "identity" && s.scope === "@opentelemetry/instrumentation-redis" && s.parentSpanId !== ""),
      "a Redis span of identity inside a request",
    );
    expect(redisSpan.attributes["db.query.text"]).toBe(redisSpan.attributes["db.operation.name"]);
  });

  it("records identity's mail sends, naming the SMTP server and nothing of the mail", async () => {
    await signUp(`trace-${randomBytes(6).toString("hex")}`);
    const mailSpan = await waitFor(
      () => spans().find((s) => s.service === "identity" && s.scope === "@app/mailer" && s.name === "mail send"),
      "identity's span of a mail send",
    );
    expect(mailSpan.kind).toBe(CLIENT);
    expect(mailSpan.attributes).toEqual({
      "network.protocol.name": "smtp",
      "server.address": "127.0.0.1",
      "server.port": Number(new URL(stack.devMail?.smtpUrl ?? "").port),
    });
  });

  it("never exports a token from a URL, an Authorization header or a cookie", async () => {
    const { cookie, jwt } = await signUp(`trace-${randomBytes(6).toString("hex")}`);
    const token = `tok${randomBytes(12).toString("hex")}`;
    await fetch(`${stack.baseUrl}/api/auth/verify-email?token=${token}`, { headers: { cookie } });
    await fetch(`${stack.baseUrl}/api/auth/reset-password/${token}`);
    await fetch(`${stack.baseUrl}/api/me?token=${token}`, { headers: { authorization: `Bearer ${jwt}` } });
    const queries = await waitFor(() => {
      const found = spans().filter((s) => String(s.attributes["url.query"] ?? s.attributes["url.full"] ?? "").includes("token=[REDACTED]"));
      // The gateway's server and client spans and the service's server span of the two queries.
      return found.length >= 6 ? found : undefined;
    }, "spans of the requests with a token in their query");
    expect(new Set(queries.map((s) => s.service))).toEqual(new Set(["gateway", "identity", "api"]));
    await waitFor(
      () => spans().find((s) => s.service === "identity" && s.attributes["url.path"] === "/api/auth/reset-password/[REDACTED]"),
      "identity's span of the reset link, its token redacted",
    );
    const text = bodies.map((b) => b.text).join("\n");
    for (const secret of [token, jwt, cookie.split("=")[1] ?? ""]) {
      expect(secret.length).toBeGreaterThan(10);
      expect(text).not.toContain(secret);
    }
  });
});
