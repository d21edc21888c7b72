import cors from "cors";
import express, { type RequestHandler } from "express";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { corsPolicy } from "./cors.js";

const ORIGIN = "http://localhost:3000";

function appWith(policy: RequestHandler) {
  const app = express();
  app.use(policy);
  app.all("/x", (_req, res) => {
    res.status(200).json({ ok: true });
  });
  return app;
}

const corsHeaders = (headers: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith("access-control-") || name === "vary"));

describe("corsPolicy", () => {
  it("answers a request without Origin exactly as the cors package does: no CORS header, no Vary", async () => {
    const ours = await request(appWith(corsPolicy({ origins: [ORIGIN] }))).get("/x");
    const bare = await request(appWith(cors({ origin: (_o, cb) => cb(null, false), credentials: true }) as RequestHandler)).get("/x");
    expect(corsHeaders(ours.headers)).toEqual({});
    expect(corsHeaders(bare.headers)).toEqual({});
    const preflight = await request(appWith(corsPolicy({ origins: [ORIGIN] }))).options("/x");
    expect(corsHeaders(preflight.headers)).toEqual({});
  });

  it("allows a listed origin with credentials and exposes set-auth-jwt; a foreign origin gets nothing", async () => {
    const app = appWith(corsPolicy({ origins: [ORIGIN] }));
    const allowed = await request(app).get("/x").set("origin", ORIGIN);
    expect(allowed.headers["access-control-allow-origin"]).toBe(ORIGIN);
    expect(allowed.headers["access-control-allow-credentials"]).toBe("true");
    expect(allowed.headers["access-control-expose-headers"]).toContain("set-auth-jwt");
    const foreign = await request(app).get("/x").set("origin", "http://evil.example");
    expect(foreign.headers["access-control-allow-origin"]).toBeUndefined();
  });
});
