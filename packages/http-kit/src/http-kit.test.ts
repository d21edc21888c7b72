import { Writable } from "node:stream";
import express from "express";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  AppError,
  createLogger,
  errorHandler,
  jsonBody,
  notFoundHandler,
  parseOrThrow,
  redactUrl,
  requestLogging,
  setContextUser,
} from "./index.js";

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { lines, logger: createLogger({ name: "test", destination }) };
}

function kitchenSink() {
  const { lines, logger } = capture();
  const app = express();
  app.use(requestLogging(logger));
  app.use(jsonBody({ limit: "1kb" }));
  app.post("/echo", (req, res) => {
    const body = parseOrThrow(z.strictObject({ name: z.string().min(1) }), req.body);
    setContextUser("user-1");
    res.json(body);
  });
  app.get("/boom", () => {
    throw new Error("secret internals");
  });
  app.get("/teapot", () => {
    throw new AppError("rate_limited", "slow down", { headers: { "Retry-After": "7" } });
  });
  app.use(notFoundHandler());
  app.use(errorHandler({ logger }));
  return { app, lines };
}

describe("http-kit", () => {
  it("parses JSON and names invalid fields", async () => {
    const { app } = kitchenSink();
    await request(app).post("/echo").send({ name: "a" }).expect(200, { name: "a" });
    const bad = await request(app).post("/echo").send({ name: "" }).expect(400);
    expect(bad.body.error.code).toBe("validation_failed");
    expect(bad.body.error.issues[0].path).toBe("name");
    expect(bad.body.error.message).toContain("name");
  });

  it("answers 400 for malformed JSON, 413 for oversized, 415 for other types", async () => {
    const { app } = kitchenSink();
    const bad = await request(app).post("/echo").set("content-type", "application/json").send("{nope").expect(400);
    expect(bad.body).toEqual({ ok: false, error: { code: "invalid_json", message: expect.any(String) } });
    const big = await request(app)
      .post("/echo")
      .send({ name: "x".repeat(5000) })
      .expect(413);
    expect(big.body.error.code).toBe("payload_too_large");
    const form = await request(app).post("/echo").type("form").send("name=a").expect(415);
    expect(form.body.error.code).toBe("unsupported_media_type");
  });

  it("refuses NUL and lone surrogates anywhere in a JSON body, naming the field", async () => {
    const { app } = kitchenSink();
    const res = await request(app).post("/echo").set("content-type", "application/json").send('{"name":"a\\u0000b"}').expect(400);
    expect(res.body.error.issues[0].path).toBe("name");
    const nested = await request(app).post("/echo").set("content-type", "application/json").send('{"x":{"y":["\\ud800"]}}').expect(400);
    expect(nested.body.error.issues[0].path).toBe("x.y.0");
  });

  it("hides internals of 500s, keeps headers of coded errors, 404s unknown routes", async () => {
    const { app } = kitchenSink();
    const boom = await request(app).get("/boom").expect(500);
    expect(boom.body).toEqual({ ok: false, error: { code: "internal_error", message: "internal error" } });
    const limited = await request(app).get("/teapot").expect(429);
    expect(limited.headers["retry-after"]).toBe("7");
    const missing = await request(app).get("/nowhere").expect(404);
    expect(missing.body.error.code).toBe("not_found");
  });

  it("tags the user and never logs tokens, cookies or authorization", async () => {
    const { app, lines } = kitchenSink();
    await request(app)
      .post("/echo?token=abc.def.ghi")
      .set("authorization", "Bearer abc.def.ghi")
      .set("cookie", "x.session_token=s3cr3t")
      .send({ name: "a" })
      .expect(200);
    const text = lines.join("");
    expect(text).toContain('"userId":"user-1"');
    expect(text).not.toContain("abc.def.ghi");
    expect(text).not.toContain("s3cr3t");
    expect(redactUrl("/api/ws?x=1&token=a.b.c")).toBe("/api/ws?x=1&token=[REDACTED]");
    expect(redactUrl("/api/ws?%74oken=a.b.c&TOKEN=d.e.f&code=1")).toBe("/api/ws?%74oken=[REDACTED]&TOKEN=[REDACTED]&code=[REDACTED]");
    expect(redactUrl("/api/tasks?limit=5")).toBe("/api/tasks?limit=5");
    expect(redactUrl("/api/x?%E0%A4%A=1&token")).toBe("/api/x?%E0%A4%A=1&token=[REDACTED]");
  });

  it("redacts secret fields passed to the logger directly", () => {
    const { lines, logger } = capture();
    logger.info({ password: "hunter22", user: { password: "p", token: "t" }, headers: { authorization: "Bearer x" } }, "x");
    expect(lines.join("")).not.toMatch(/hunter22|"p"|Bearer x|"t"/);
  });
});
