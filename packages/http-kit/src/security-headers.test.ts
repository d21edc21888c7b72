import express, { type RequestHandler } from "express";
import helmet from "helmet";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { helmetPolicy, recordHeaders, securityHeaders } from "./security-headers.js";

const HOP_BY_HOP = new Set(["date", "connection", "keep-alive", "content-length", "etag", "content-type", "x-powered-by"]);

async function headersOf(middleware: RequestHandler): Promise<Record<string, unknown>> {
  const app = express();
  app.use(middleware);
  app.get("/", (_req, res) => {
    res.json({ ok: true });
  });
  const res = await request(app).get("/");
  return Object.fromEntries(Object.entries(res.headers).filter(([name]) => !HOP_BY_HOP.has(name)));
}

describe("securityHeaders", () => {
  it("sets exactly the headers helmet sets with the same policy", async () => {
    for (const crossOriginResourcePolicy of [undefined, "same-origin", "cross-origin"] as const) {
      const options = crossOriginResourcePolicy ? { crossOriginResourcePolicy } : {};
      const recorded = await headersOf(securityHeaders(options));
      expect(recorded).toEqual(await headersOf(helmetPolicy(options)));
      expect(Object.keys(recorded).length).toBeGreaterThanOrEqual(10);
    }
  });

  it("keeps the policy: nothing allowed, no framing, no referrer", async () => {
    const headers = await headersOf(securityHeaders());
    expect(headers["content-security-policy"]).toBe("default-src 'none';base-uri 'none';form-action 'none';frame-ancestors 'none'");
    expect(headers["x-frame-options"]).toBe("DENY");
    expect(headers["referrer-policy"]).toBe("no-referrer");
    expect(headers["cross-origin-resource-policy"]).toBe("same-site");
    expect(headers["x-content-type-options"]).toBe("nosniff");
  });

  it("removes X-Powered-By as helmet does", async () => {
    const app = express(); // x-powered-by left enabled
    app.use(securityHeaders());
    app.get("/", (_req, res) => {
      res.json({});
    });
    const res = await request(app).get("/");
    expect(res.headers["x-powered-by"]).toBeUndefined();
  });

  it("refuses to record a middleware that reads the request or finishes later", () => {
    const readsRequest: RequestHandler = (req, _res, next) => {
      if (req.secure) next();
      else next();
    };
    expect(() => recordHeaders(readsRequest)).toThrow(/reads the request \(secure\)/);
    const later: RequestHandler = (_req, _res, next) => {
      setTimeout(next, 0);
    };
    expect(() => recordHeaders(later)).toThrow(/did not finish synchronously/);
    const dynamicCsp = helmet({ contentSecurityPolicy: { directives: { "script-src": [(req) => String(req.url)] } } }) as RequestHandler;
    expect(() => recordHeaders(dynamicCsp)).toThrow();
  });
});
