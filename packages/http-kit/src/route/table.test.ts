import { AsyncLocalStorage } from "node:async_hooks";
import { Writable } from "node:stream";
import express, { type Express } from "express";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AppError } from "../app-error.js";
import { errorHandler, notFoundHandler } from "../error-handler.js";
import { createLogger } from "../logger.js";
import { jsonBodyGuard } from "./body-guard.js";
import { aroundGuard, guard, middlewareGuard } from "./guard.js";
import { buildOpenApi } from "./openapi.js";
import { ANSWERED, defineRoute } from "./spec.js";
import { RouteTable } from "./table.js";

const quiet = createLogger({ name: "test", destination: new Writable({ write: (_c, _e, cb) => cb() }) });

function serve(table: RouteTable, topLevelFields?: (req: express.Request) => boolean): Express {
  const app = express();
  app.use(table.router());
  app.use(notFoundHandler());
  app.use(errorHandler({ logger: quiet, ...(topLevelFields ? { topLevelFields } : {}) }));
  return app;
}

const bearer = guard(
  "bearer",
  (req) => {
    if (req.headers.authorization !== "Bearer good") throw new AppError("unauthorized", "sign in first");
  },
  { security: "bearerAuth" },
);

const itemSchema = z.object({ id: z.string(), title: z.string() });

describe("route table", () => {
  it("runs guards in order before validation, so an unauthenticated bad request answers 401, not 400", async () => {
    const seen: string[] = [];
    const table = new RouteTable().add(
      defineRoute({
        method: "post",
        path: "/items/:id",
        tag: "items",
        summary: "update",
        params: z.object({ id: z.string().regex(/^\d+$/) }),
        body: z.object({ title: z.string().min(1) }),
        response: itemSchema,
        guards: [
          guard("first", () => void seen.push("first")),
          bearer,
          guard("third", async () => void seen.push("third")),
          jsonBodyGuard(),
        ],
        handler: ({ params, body }) => ({ id: params.id, title: body.title }),
      }),
    );
    const app = serve(table);
    const denied = await request(app).post("/items/x").send({ title: "" });
    expect(denied.status).toBe(401);
    expect(denied.body).toEqual({ ok: false, error: { code: "unauthorized", message: "sign in first" } });
    expect(seen).toEqual(["first"]);

    // Params are validated before the body guard reads anything: a bad id answers 400 naming params.
    const badId = await request(app).post("/items/x").set("authorization", "Bearer good").set("content-type", "text/plain").send("x");
    expect(badId.status).toBe(400);
    expect(badId.body.error.message).toBe("invalid params: id");

    const badType = await request(app).post("/items/1").set("authorization", "Bearer good").set("content-type", "text/plain").send("x");
    expect(badType.status).toBe(415);
    const badBody = await request(app).post("/items/1").set("authorization", "Bearer good").send({ title: "" });
    expect(badBody.status).toBe(400);
    expect(badBody.body.error.code).toBe("validation_failed");
    const good = await request(app).post("/items/1").set("authorization", "Bearer good").send({ title: "t" });
    expect(good.status).toBe(200);
    expect(good.body).toEqual({ ok: true, data: { id: "1", title: "t" } });
  });

  it("writes the reply the route declares: envelope, plain JSON, 204, or the handler's own", async () => {
    const table = new RouteTable().add(
      defineRoute({ method: "get", path: "/a", tag: "t", summary: "a", status: 201, handler: () => ({ n: 1 }) }),
      defineRoute({ method: "get", path: "/b", tag: "t", summary: "b", reply: "json", handler: () => null }),
      defineRoute({ method: "delete", path: "/c", tag: "t", summary: "c", status: 204, handler: () => undefined }),
      defineRoute({
        method: "get",
        path: "/d",
        tag: "t",
        summary: "d",
        reply: { raw: "text/plain" },
        handler: ({ res }) => void res.type("text/plain").send("hi"),
      }),
    );
    const app = serve(table);
    expect((await request(app).get("/a")).body).toEqual({ ok: true, data: { n: 1 } });
    expect((await request(app).get("/a")).status).toBe(201);
    const b = await request(app).get("/b");
    expect([b.status, b.text]).toEqual([200, "null"]);
    const c = await request(app).delete("/c");
    expect([c.status, c.text]).toEqual([204, ""]);
    expect((await request(app).get("/d")).text).toBe("hi");
  });

  it("ends the route when a middleware guard answers by itself, and passes its errors on", async () => {
    let handled = 0;
    const limiter: express.RequestHandler = (req, _res, next) =>
      req.headers["x-over"] ? next(new AppError("rate_limited", "slow down", { headers: { "retry-after": "7" } })) : next();
    const answering: express.RequestHandler = (req, res, next) => (req.headers["x-answer"] ? void res.status(202).end() : next());
    const table = new RouteTable().add(
      defineRoute({
        method: "get",
        path: "/limited",
        tag: "t",
        summary: "l",
        guards: [middlewareGuard("rateLimit", [limiter, answering])],
        handler: () => ({ handled: ++handled }),
      }),
    );
    const app = serve(table);
    const over = await request(app).get("/limited").set("x-over", "1");
    expect([over.status, over.headers["retry-after"], over.body.error.code]).toEqual([429, "7", "rate_limited"]);
    expect((await request(app).get("/limited").set("x-answer", "1")).status).toBe(202);
    expect(handled).toBe(0);
    expect((await request(app).get("/limited")).body).toEqual({ ok: true, data: { handled: 1 } });
  });

  it("runs middleware that calls next synchronously without a promise, and waits for one that calls it later", async () => {
    const order: string[] = [];
    const sync: express.RequestHandler = (_req, _res, next) => {
      order.push("sync");
      next();
    };
    const later: express.RequestHandler = (_req, _res, next) => {
      setImmediate(() => {
        order.push("later");
        next();
      });
    };
    const syncGuard = middlewareGuard("sync", sync);
    const probe = { headersSent: false, writableEnded: false } as unknown as express.Response;
    expect(syncGuard.run({} as express.Request, probe)).toBeUndefined();
    const table = new RouteTable().add(
      defineRoute({
        method: "get",
        path: "/mixed",
        tag: "t",
        summary: "m",
        guards: [syncGuard, middlewareGuard("later", later), middlewareGuard("sync again", sync)],
        handler: () => order.join(","),
      }),
    );
    expect((await request(serve(table)).get("/mixed")).body).toEqual({ ok: true, data: "sync,sync,later,sync" });
  });

  it("runs the rest of a route inside an around guard's context", async () => {
    const storage = new AsyncLocalStorage<string>();
    const table = new RouteTable().add(
      defineRoute({
        method: "get",
        path: "/ctx",
        tag: "t",
        summary: "c",
        guards: [
          aroundGuard("client", (req, _res, rest) => storage.run(String(req.headers["x-client"]), rest)),
          guard("hop", async () => undefined),
        ],
        handler: async () => {
          await new Promise((resolve) => setImmediate(resolve));
          return { client: storage.getStore() };
        },
      }),
    );
    expect((await request(serve(table)).get("/ctx").set("x-client", "c1")).body).toEqual({ ok: true, data: { client: "c1" } });
  });

  it("writes nothing more when a JSON route's handler answered by itself, and counts the answer", async () => {
    const table = new RouteTable({ checkResponses: true }).add(
      defineRoute({
        method: "get",
        path: "/either",
        tag: "t",
        summary: "e",
        reply: "json",
        response: itemSchema,
        handler: ({ req, res }) => {
          if (req.query.page === undefined) return { id: "1", title: "x" };
          res.status(200).type("html").send("<p>page</p>");
          return ANSWERED;
        },
      }),
    );
    const app = serve(table);
    expect((await request(app).get("/either")).body).toEqual({ id: "1", title: "x" });
    const page = await request(app).get("/either?page=1");
    expect([page.status, page.text]).toEqual([200, "<p>page</p>"]);
    expect(table.coverage()[0]).toMatchObject({ answered: 2, nonConforming: [] });
  });

  it("checks every answer against the route's response schema when asked, and counts answers per route", async () => {
    const table = new RouteTable({ checkResponses: true }).add(
      defineRoute({ method: "get", path: "/good", tag: "t", summary: "g", response: itemSchema, handler: () => ({ id: "1", title: "x" }) }),
      defineRoute({
        method: "get",
        path: "/bad",
        tag: "t",
        summary: "b",
        response: itemSchema,
        handler: () => ({ id: 1, title: "x" }) as unknown as z.input<typeof itemSchema>,
      }),
      defineRoute({ method: "get", path: "/never", tag: "t", summary: "n", handler: () => ({}) }),
    );
    const app = serve(table);
    expect((await request(app).get("/good")).status).toBe(200);
    const bad = await request(app).get("/bad");
    expect(bad.status).toBe(500);
    expect(bad.body).toEqual({ ok: false, error: { code: "internal_error", message: "internal error" } });
    const coverage = Object.fromEntries(table.coverage().map((c) => [c.key, c]));
    expect(coverage["GET /good"]).toMatchObject({ answered: 1, nonConforming: [] });
    expect(coverage["GET /bad"]?.nonConforming[0]).toContain("id");
    expect(coverage["GET /never"]?.answered).toBe(0);
  });

  it("refuses a route declared twice, and a body schema without a guard that reads it", () => {
    const route = defineRoute({ method: "get", path: "/x", tag: "t", summary: "x", handler: () => 1 });
    expect(() => new RouteTable().add(route, route)).toThrow("GET /x is declared twice");
    const noReader = defineRoute({ method: "post", path: "/y", tag: "t", summary: "y", body: z.object({}), handler: () => 1 });
    expect(() => new RouteTable().add(noReader).router()).toThrow("POST /y declares a body schema but no guard that reads the body");
  });

  it("puts better-auth's top-level code and message beside the envelope where the error handler is told to", async () => {
    const table = new RouteTable().add(
      defineRoute({ method: "get", path: "/auth/x", tag: "t", summary: "x", guards: [bearer], handler: () => 1 }),
    );
    const app = serve(table, (req) => req.path.startsWith("/auth/"));
    const res = await request(app).get("/auth/x");
    expect(res.body).toEqual({
      ok: false,
      error: { code: "unauthorized", message: "sign in first" },
      code: "unauthorized",
      message: "sign in first",
    });
    const other = await request(app).get("/elsewhere");
    expect(other.body).toEqual({ ok: false, error: { code: "not_found", message: "no route for GET /elsewhere" } });
  });

  it("documents each route from its declaration in OpenAPI 3.1", () => {
    const table = new RouteTable().add(
      defineRoute({
        method: "patch",
        path: "/items/:id",
        tag: "items",
        summary: "Update an item",
        params: z.object({ id: z.string() }),
        query: z.object({ dry: z.enum(["1"]).optional() }),
        body: z.object({ title: z.string() }),
        response: itemSchema,
        guards: [bearer, jsonBodyGuard()],
        handler: () => ({ id: "1", title: "t" }),
      }),
    );
    const doc = buildOpenApi(table, {
      title: "T",
      version: "1",
      description: "d",
      serverUrl: "http://x",
      securitySchemes: { bearerAuth: { type: "http" } },
    });
    const op = (doc.paths as Record<string, Record<string, Record<string, unknown>>>)["/items/{id}"]?.patch;
    expect(op?.security).toEqual([{ bearerAuth: [] }]);
    expect(op?.["x-guards"]).toEqual(["bearer", "jsonBody"]);
    expect(op?.parameters).toEqual([
      { name: "id", in: "path", required: true, schema: { type: "string" } },
      { name: "dry", in: "query", required: false, schema: { type: "string", enum: ["1"] } },
    ]);
    expect(Object.keys((op?.requestBody as { content?: object } | undefined)?.content ?? {})).toEqual(["application/json"]);
    expect(doc.openapi).toBe("3.1.0");
  });
});

describe("route table mounted on the app itself", () => {
  it("answers like the table's router: routes in declaration order, case-insensitive, trailing slash, HEAD, 404 after them", async () => {
    const table = new RouteTable().add(
      defineRoute({
        method: "get",
        path: "/items/:id",
        tag: "items",
        summary: "one item",
        guards: [bearer],
        handler: ({ req }) => ({ id: req.params.id, title: "param" }),
      }),
      defineRoute({
        method: "get",
        path: "/items/fixed",
        tag: "items",
        summary: "shadowed",
        handler: () => ({ id: "fixed", title: "never: declared after /items/:id" }),
      }),
    );
    const app = express();
    table.mount(app);
    app.use(notFoundHandler());
    app.use(errorHandler({ logger: quiet }));
    for (const target of [app, serve(table)]) {
      await request(target).get("/items/fixed").expect(401);
      const fixed = await request(target).get("/ITEMS/fixed/").set("authorization", "Bearer good").expect(200);
      expect(fixed.body).toEqual({ ok: true, data: { id: "fixed", title: "param" } });
      await request(target).head("/items/x").set("authorization", "Bearer good").expect(200);
      await request(target).get("/nope").expect(404);
    }
  });
});
