import { createLogger, redactUrl, routeKey } from "@app/http-kit";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.js";
import { signUp } from "./kit.js";
import { linkOf, type MailKit, mailKit, pathOf } from "./mail-kit.js";

let kit: MailKit;
beforeAll(async () => {
  kit = await mailKit();
});
afterAll(async () => {
  await kit?.close();
});

/** The access lines the app wrote (pino JSON, as on stdout) since `from`. */
function accessUrls(from: number): string[] {
  return kit.logs
    .slice(from)
    .map((line) => JSON.parse(line) as { req?: { url?: string } })
    .flatMap((line) => (line.req?.url ? [line.req.url] : []));
}

describe("secrets in request paths never reach the log", () => {
  it("the mailed reset link's token is redacted in the access line, in every spelling that reaches the route", async () => {
    const { body } = await signUp(kit.app);
    await request(kit.app).post("/api/auth/request-password-reset").send({ email: body.email }).expect(200);
    const link = linkOf(await kit.mailTo(body.email, "Reset"));
    const token = new URL(link).pathname.split("/").pop() ?? "";
    expect(token).toMatch(/^[\w-]{43}$/);
    const from = kit.logs.length;

    const hop = await request(kit.app).get(pathOf(link)).expect(302);
    expect(hop.headers.location).toContain(`token=${token}`);
    for (const spelling of [
      `/API/AUTH/RESET-PASSWORD/${token}`,
      `/api/auth/reset-password/${token}/`,
      `/api/auth/reset-password/${token}?callbackURL=/reset`,
    ])
      await request(kit.app).get(spelling).expect(302);
    await request(kit.app).post(`/api/auth/reset-password?token=${token}`).send({ newPassword: "a brand new secret" }).expect(200);

    const urls = accessUrls(from);
    expect(urls).toHaveLength(5);
    expect(urls[0]).toMatch(/^\/api\/auth\/reset-password\/\[REDACTED\]\?callbackURL=/);
    expect(urls[4]).toBe("/api/auth/reset-password?token=[REDACTED]");
    expect(kit.logs.slice(from).join("")).not.toContain(token);
  });

  // The API's routes are checked the same way in apps/api/test/route-conformance.test.ts.
  it("every route of identity's table with a secret path parameter is redacted", async () => {
    const built = createApp({ config: kit.config, db: kit.db, logger: createLogger({ name: "routes", level: "silent" }) });
    try {
      const secret = built.routes.routes.filter((route) =>
        (route.path.match(/:\w+/g) ?? []).some((param) => /token|secret|code|key|password/i.test(param)),
      );
      expect(secret.map(routeKey)).toContain("GET /api/auth/reset-password/:token");
      for (const route of secret) {
        expect(redactUrl(route.path.replace(/:\w+/g, "s3cr3t-value")), routeKey(route)).not.toContain("s3cr3t-value");
      }
    } finally {
      await built.close();
    }
  });
});
