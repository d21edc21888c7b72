import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { redactUrl } from "@app/http-kit";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signUp } from "./kit.js";
import { linkOf, type MailKit, mailKit, pathOf } from "./mail-kit.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

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

  it("every route of identity and the API with a secret path parameter is redacted", () => {
    const sources = [
      ["/api/auth", "apps/identity/src/routes"],
      ["", "apps/api/src/routes"],
    ] as const;
    const secretRoutes: string[] = [];
    for (const [mount, dir] of sources) {
      for (const file of readdirSync(path.join(ROOT, dir)).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))) {
        const text = readFileSync(path.join(ROOT, dir, file), "utf8");
        for (const [, route] of text.matchAll(/["'`](\/[\w/:.-]*:\w+[\w/:.-]*)["'`]/g)) {
          if (/:(\w*(token|secret|code|key|password)\w*)/i.test(route ?? "")) secretRoutes.push(`${mount}${route}`);
        }
      }
    }
    expect(secretRoutes).toContain("/api/auth/reset-password/:token");
    for (const route of secretRoutes) {
      const url = route.replace(/:\w+/g, "s3cr3t-value");
      expect(redactUrl(url), route).not.toContain("s3cr3t-value");
    }
  });
});
