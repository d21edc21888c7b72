import request from "supertest";
import { afterEach, describe, expect, it } from "vitest";
import { identityKit, type Kit, signUp } from "./kit.js";

// Limited routes state their policies and what is left (IETF draft-8 `RateLimit` and
// `RateLimit-Policy`, one member per limiter), and a 429 says when to come back (`Retry-After`).
const open: Kit[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((k) => k.close()));
});

async function kit(env: Record<string, string> = {}) {
  const k = await identityKit({ env });
  open.push(k);
  return k;
}

/** The members of a draft-8 list field: name -> parameters. */
function members(header: string | undefined): Map<string, Record<string, string>> {
  const out = new Map<string, Record<string, string>>();
  for (const member of (header ?? "").split(/,\s*(?=")/).filter(Boolean)) {
    const [name = "", ...params] = member.split(";").map((p) => p.trim());
    out.set(JSON.parse(name) as string, Object.fromEntries(params.map((p) => p.split("=", 2) as [string, string])));
  }
  return out;
}

describe("RateLimit and RateLimit-Policy headers", () => {
  it("every limited route names its policies with quota and window, and what is left of each", async () => {
    const k = await kit({ RATE_LIMIT_IP_MAX: "50", RATE_LIMIT_IP_WINDOW_MS: "600000", RATE_LIMIT_ACCOUNT_MAX: "7" });
    const { cookie, body } = await signUp(k.app);
    const routes: Array<[request.Test, string[]]> = [
      [
        request(k.app).post("/api/auth/sign-in/email").send({ email: body.email, password: body.password }),
        ["sign-in-ip", "sign-in-account-ip"],
      ],
      [
        request(k.app).post("/api/auth/sign-up/email").send({ email: "new-one@example.com", password: "a good password", name: "N" }),
        ["sign-up-ip", "sign-up-account-ip"],
      ],
      [request(k.app).post("/api/auth/request-password-reset").send({ email: body.email }), ["mail-ip", "mail-address"]],
      [request(k.app).post("/api/auth/reset-password").send({ token: "nope", newPassword: "a new password" }), ["reset-password-ip"]],
      [
        request(k.app)
          .post("/api/auth/change-password")
          .set("cookie", cookie)
          .send({ currentPassword: "wrong one", newPassword: "a new password" }),
        ["password-check-ip", "password-check-user"],
      ],
    ];
    for (const [call, names] of routes) {
      const res = await call;
      const path = (res as unknown as { req: { path: string } }).req.path;
      const policy = members(res.headers["ratelimit-policy"]);
      const state = members(res.headers.ratelimit);
      expect([...policy.keys()], path).toEqual(names);
      expect([...state.keys()], path).toEqual(names);
      for (const name of names) {
        expect(Number(policy.get(name)?.q)).toBeGreaterThan(0);
        expect(Number(policy.get(name)?.w)).toBeGreaterThan(0);
        expect(policy.get(name)?.pk).toMatch(/^:[\w+/=]+:$/);
        expect(Number(state.get(name)?.r)).toBeGreaterThanOrEqual(0);
        expect(Number(state.get(name)?.t)).toBeGreaterThan(0);
      }
    }
    const signIn = members((await request(k.app).post("/api/auth/sign-in/email").send(body)).headers["ratelimit-policy"]);
    expect(signIn.get("sign-in-ip")).toMatchObject({ q: "50", w: "600" });
    expect(signIn.get("sign-in-account-ip")).toMatchObject({ q: "7", w: "900" });
  });

  it("a 429 carries Retry-After and a policy with nothing left", async () => {
    const k = await kit({ RATE_LIMIT_IP_MAX: "2" });
    const signIn = () =>
      request(k.app).post("/api/auth/sign-in/email").set("x-forwarded-for", "203.0.113.5").send({ email: "a@b.co", password: "wrong one" });
    expect(members((await signIn()).headers.ratelimit).get("sign-in-ip")?.r).toBe("1");
    expect(members((await signIn()).headers.ratelimit).get("sign-in-ip")?.r).toBe("0");
    const limited = await signIn();
    expect(limited.status).toBe(429);
    expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(members(limited.headers.ratelimit).get("sign-in-ip")?.r).toBe("0");
    expect(members(limited.headers["ratelimit-policy"]).get("sign-in-ip")?.q).toBe("2");
  });

  it("unlimited routes send none", async () => {
    const k = await kit();
    const res = await request(k.app).get("/api/auth/jwks").expect(200);
    expect(res.headers.ratelimit).toBeUndefined();
    expect(res.headers["ratelimit-policy"]).toBeUndefined();
  });
});
