import { spawn } from "node:child_process";
import path from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import express from "express";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { setContextUser } from "./context.js";
import { errorHandler } from "./error-handler.js";
import { createLogger, type LogFormat, logFormat, requestLogging } from "./logger.js";

const PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** Child processes import the built package (run `pnpm build` first), from the package directory. */
const DIST = path.join(PACKAGE, "dist/index.js");

function capture(level = "info", format: LogFormat = "json") {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  const logger = createLogger({ name: "test", level, destination, format });
  return { lines, logger, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

function app(logger: ReturnType<typeof createLogger>) {
  const a = express();
  a.use(requestLogging(logger));
  a.get("/me", (_req, res) => {
    setContextUser("user-1");
    res.json({ ok: true });
  });
  a.get("/missing", (_req, res) => {
    res.status(404).json({ ok: false });
  });
  a.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  a.options("/me", (_req, res) => {
    res.status(204).end();
  });
  a.get("/boom", () => {
    throw new Error("boom");
  });
  a.use(errorHandler({ logger }));
  return a;
}

describe("access log", () => {
  it("writes one line per response with method, redacted URL, status, duration and ids", async () => {
    const { logger, parsed } = capture();
    await request(app(logger))
      .get("/me?token=abc.def.ghi&x=1")
      .set("x-request-id", "rid-1")
      .set("authorization", "Bearer abc.def.ghi")
      .set("cookie", "identity.session_token=s3cr3t")
      .expect(200);
    const [line] = parsed();
    expect(line).toMatchObject({
      level: 30,
      name: "test",
      reqId: "rid-1",
      requestId: "rid-1",
      userId: "user-1",
      req: { method: "GET", url: "/me?token=[REDACTED]&x=1" },
      res: { statusCode: 200 },
      msg: "request completed",
    });
    expect(typeof line?.responseTime).toBe("number");
    expect(Object.keys(line?.req ?? {})).toEqual(["method", "url"]);
    expect(JSON.stringify(parsed())).not.toMatch(/abc\.def\.ghi|s3cr3t|Bearer/);
  });

  it("logs 4xx at warn without a user, 5xx at error with an err, and ignores an unsafe request id", async () => {
    const { logger, parsed } = capture();
    const a = app(logger);
    const missing = await request(a).get("/missing").set("x-request-id", "bad id!").expect(404);
    await request(a).get("/boom").expect(500);
    const access = parsed().filter((l) => l.req !== undefined);
    expect(access[0]).toMatchObject({ level: 40, res: { statusCode: 404 }, msg: "request completed" });
    expect(access[0]?.userId).toBeUndefined();
    expect(access[0]?.requestId).toBe(missing.headers["x-request-id"]);
    expect(access[0]?.requestId).not.toBe("bad id!");
    expect(access[1]).toMatchObject({ level: 50, res: { statusCode: 500 }, msg: "request errored" });
    expect(access[1]?.err).toMatchObject({ message: "failed with status code 500" });
  });

  it("follows the logger's level", async () => {
    const { logger, parsed } = capture("warn");
    const a = app(logger);
    await request(a).get("/me").expect(200);
    await request(a).get("/missing").expect(404);
    expect(parsed().map((l) => l.res)).toEqual([{ statusCode: 404 }]);
  });
});

describe("routine requests", () => {
  it("logs successful preflights and health checks at debug, so the default level stays quiet", async () => {
    const quiet = capture("info");
    await request(app(quiet.logger)).options("/me").expect(204);
    await request(app(quiet.logger)).get("/healthz").expect(200);
    await request(app(quiet.logger)).get("/me").expect(200);
    expect(quiet.parsed().map((l) => (l.req as { url: string }).url)).toEqual(["/me"]);

    const verbose = capture("debug");
    await request(app(verbose.logger)).options("/me").expect(204);
    await request(app(verbose.logger)).get("/healthz?probe=1").expect(200);
    expect(verbose.parsed().map((l) => [l.level, (l.req as { method: string }).method])).toEqual([
      [20, "OPTIONS"],
      [20, "GET"],
    ]);
  });
});

describe("log format", () => {
  it("is pretty in development on a terminal, JSON in production or off a terminal, and LOG_FORMAT forces either", () => {
    expect(logFormat({}, true)).toBe("pretty");
    expect(logFormat({ NODE_ENV: "production" }, true)).toBe("json");
    expect(logFormat({}, false)).toBe("json");
    expect(logFormat({ LOG_FORMAT: "pretty", NODE_ENV: "production" }, false)).toBe("pretty");
    expect(logFormat({ LOG_FORMAT: "json" }, true)).toBe("json");
    expect(() => logFormat({ LOG_FORMAT: "yaml" }, true)).toThrow(/LOG_FORMAT must be "json" or "pretty"/);
  });

  it("stops a service with an invalid LOG_FORMAT with status 78 and a line naming the variable", async () => {
    const script = `import { createLogger } from ${JSON.stringify(DIST)}; createLogger({ name: "svc" });`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      cwd: PACKAGE,
      env: { ...process.env, LOG_FORMAT: "yaml" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let err = "";
    child.stderr.on("data", (c: Buffer) => {
      err += c.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(code).toBe(78);
    expect(err).toBe('svc: invalid configuration\n  - LOG_FORMAT: LOG_FORMAT must be "json" or "pretty", got "yaml"\n');
  });

  it("prints one readable line per record, with the access line as method, URL, status and duration, and no secret", async () => {
    const { lines, logger } = capture("info", "pretty");
    await request(app(logger))
      .get("/me?token=abc.def.ghi&x=1")
      .set("authorization", "Bearer abc.def.ghi")
      .set("cookie", "identity.session_token=s3cr3t")
      .expect(200);
    logger.info({ req: { headers: { authorization: "Bearer abc.def.ghi", cookie: "s=s3cr3t" } }, password: "hunter2" }, "with secrets");
    logger.warn({ headers: { authorization: "Bearer abc.def.ghi" }, token: "abc.def.ghi" }, "more secrets");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^\[[\d:.]+\] INFO \(test\): GET \/me\?token=\[REDACTED\]&x=1 200 \d+ms /);
    expect(lines[0]).toContain('"userId":"user-1"');
    expect(lines[1]).toContain("with secrets");
    expect(lines[2]).toContain("more secrets");
    for (const line of lines) {
      expect(line.endsWith("\n")).toBe(true);
      expect(() => JSON.parse(line)).toThrow();
    }
    expect(lines.join("")).not.toMatch(/abc\.def\.ghi|s3cr3t|hunter2|Bearer/);
  });
});
