import { AsyncLocalStorage } from "node:async_hooks";
import { Writable } from "node:stream";
import { type Context, type ContextManager, context, ROOT_CONTEXT, TraceFlags, trace } from "@opentelemetry/api";
import express, { type RequestHandler } from "express";
import request from "supertest";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger, requestLogging } from "./logger.js";

/**
 * What the SDK registers when tracing is on (packages/telemetry): a context manager on
 * AsyncLocalStorage, so the span the HTTP instrumentation makes active is seen by the handlers.
 */
class StorageContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A) {
    return this.#storage.run(ctx, () => fn.apply(thisArg, args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.#storage.disable();
    return this;
  }
}

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

/** Makes a span of the request's trace active before the rest runs, as the HTTP instrumentation does. */
const activeSpan: RequestHandler = (_req, _res, next) => {
  const span = trace.wrapSpanContext({ traceId: TRACE_ID, spanId: "00f067aa0ba902b7", traceFlags: TraceFlags.SAMPLED });
  context.with(trace.setSpan(context.active(), span), next);
};

function run(withSpan: boolean) {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      cb();
    },
  });
  const logger = createLogger({ name: "test", destination, format: "json" });
  const a = express();
  if (withSpan) a.use(activeSpan);
  a.use(requestLogging(logger));
  a.get("/ok", (_req, res) => {
    res.json({ ok: true });
  });
  a.get("/fail", (_req, res) => {
    res.status(503).json({ ok: false });
  });
  return { app: a, lines };
}

afterEach(() => {
  context.disable();
});

describe("trace_id in the access line", () => {
  it("is absent when tracing is off, even for a request that carries a traceparent", async () => {
    const { app, lines } = run(true);
    await request(app).get("/ok").set("traceparent", TRACEPARENT).expect(200);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ msg: "request completed", res: { statusCode: 200 } });
    expect(Object.keys(lines[0] ?? {})).not.toContain("trace_id");
  });

  it("is the active span's trace id when tracing is on, on completed and errored lines", async () => {
    context.setGlobalContextManager(new StorageContextManager());
    const { app, lines } = run(true);
    await request(app).get("/ok").expect(200);
    await request(app).get("/fail").expect(503);
    expect(lines.map((l) => [l.msg, l.trace_id])).toEqual([
      ["request completed", TRACE_ID],
      ["request errored", TRACE_ID],
    ]);
  });

  it("is absent for a request without an active span", async () => {
    context.setGlobalContextManager(new StorageContextManager());
    const { app, lines } = run(false);
    await request(app).get("/ok").expect(200);
    expect(lines).toHaveLength(1);
    expect(Object.keys(lines[0] ?? {})).not.toContain("trace_id");
  });
});
