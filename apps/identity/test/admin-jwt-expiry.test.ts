import { Writable } from "node:stream";
import { JWT_LIFETIME_SECONDS } from "@app/contracts";
import { createLogger, sharedSettingsShape } from "@app/http-kit";
import { decodeJwt } from "jose";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testConfig } from "../src/config.js";
import { IdentityService } from "../src/services/identity.js";
import { identityKit, type Kit, SECRET, signUp } from "./kit.js";

// JWT_EXPIRES_IN: an operator's shorter JWT lifetime (packages/http-kit/src/settings/token.ts),
// which IdentityService signs into `exp` (real PostgreSQL, real keys).
let kit: Kit;
beforeAll(async () => {
  kit = await identityKit();
});
afterAll(async () => {
  await kit?.close();
});

const lifetime = (value: string | undefined) => sharedSettingsShape.JWT_EXPIRES_IN.safeParse(value);

/** An IdentityService on the kit's database with `jwtLifetimeSeconds`. */
function serviceWith(jwtLifetimeSeconds: number | undefined): IdentityService {
  const logger = createLogger({ name: "identity-test", level: "warn", destination: new Writable({ write: (_c, _e, cb) => cb() }) });
  return new IdentityService({
    prisma: kit.db.prisma,
    logger,
    settings: {
      authSecret: SECRET,
      issuer: kit.config.issuer,
      audience: kit.config.audience,
      sessionTtlMs: kit.config.sessionTtlMs,
      ...(jwtLifetimeSeconds === undefined ? {} : { jwtLifetimeSeconds }),
    },
  });
}

describe("JWT_EXPIRES_IN", () => {
  it("reads seconds or a duration, defaults to the contract's 30 days, and refuses less than a minute or more than 30 days", () => {
    expect([lifetime("900").data, lifetime("15m").data, lifetime(" 12h ").data, lifetime("7d").data]).toEqual([900, 900, 43_200, 604_800]);
    expect(lifetime(undefined).data).toBe(JWT_LIFETIME_SECONDS);
    expect(lifetime("30d").data).toBe(JWT_LIFETIME_SECONDS);
    for (const bad of ["31d", "59", "59s", "1.5h", "15 minutes", "-60", ""]) expect(lifetime(bad).success, bad).toBe(false);
    expect(() => testConfig({ DATABASE_URL: "postgresql://x@h/d", AUTH_SECRET: SECRET, JWT_EXPIRES_IN: "45d" })).toThrow(/JWT_EXPIRES_IN/);
  });

  it("sets exp - iat of get-session's and GET token's JWTs; unset, they last the contract's 30 days", async () => {
    const user = await kit.service.accounts.signUp({
      email: `jwt-${Date.now()}@example.com`,
      password: "correct horse battery",
      name: "J",
    });
    for (const [seconds, expected] of [
      [900, 900],
      [undefined, JWT_LIFETIME_SECONDS],
    ] as const) {
      const service = serviceWith(seconds);
      const { token } = await service.sessions.create(user.id);
      const session = await service.getSession(token);
      const fromSession = decodeJwt(session?.jwt ?? "");
      const fromToken = decodeJwt(await service.issueJwt(user, { impersonatedBy: null }));
      for (const claims of [fromSession, fromToken]) expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(expected);
    }
  });

  it("reaches the app from the environment: get-session's JWT lasts JWT_EXPIRES_IN", async () => {
    const short = await identityKit({ env: { JWT_EXPIRES_IN: "15m" } });
    try {
      const { cookie } = await signUp(short.app);
      const res = await request(short.app).get("/api/auth/get-session").set("cookie", cookie).expect(200);
      const claims = decodeJwt(res.headers["set-auth-jwt"] ?? "");
      expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(900);
    } finally {
      await short.close();
    }
  });
});
