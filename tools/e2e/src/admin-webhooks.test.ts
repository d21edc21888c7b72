import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2eStack, grantRole, openBrowser, STARTUP_MS, startE2eStack, TEST_MS } from "./harness.js";
import { checkPage } from "./page-checks.js";
import { signInThroughPage } from "./two-browsers.js";

// Admin → Webhooks in Chromium against the real stack (identity's delivery worker included): an
// admin adds an endpoint on a receiver started here, copies the secret shown once, sees a
// delivery in the endpoint's log, sends it again, and deletes the endpoint.
let env: E2eStack;
let browser: Browser;
let page: Page;
let receiver: Server;
let receiverUrl: string;
let secret = "";
const accepted: string[] = [];
const problems: string[] = [];
const ADMIN = "ada@example.com";
const PASSWORD = "correct horse battery";

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      // The Standard Webhooks signature: HMAC-SHA256 of `id.timestamp.body` under the secret's bytes.
      const id = String(req.headers["webhook-id"]);
      const signed = `${id}.${req.headers["webhook-timestamp"]}.${Buffer.concat(chunks).toString("utf8")}`;
      const expected = createHmac("sha256", Buffer.from(secret.slice(6), "base64"))
        .update(signed)
        .digest("base64");
      const ok = String(req.headers["webhook-signature"]).split(" ").includes(`v1,${expected}`);
      if (ok) accepted.push(id);
      res.writeHead(ok ? 204 : 401).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  [env, { browser, page }] = await Promise.all([startE2eStack({ WEBHOOK_POLL_INTERVAL_MS: "500" }), openBrowser()]);
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  const res = await fetch(`${env.baseUrl}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: ADMIN, password: PASSWORD, name: "Ada Lovelace" }),
  });
  expect(res.status).toBe(200);
  await grantRole(env.database.url, ADMIN, "admin");
}, STARTUP_MS);
afterAll(async () => {
  await browser?.close();
  await env?.stop();
  receiver?.closeAllConnections();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
});

describe("admin webhooks page in Chromium, against the real stack", { timeout: TEST_MS * 2 }, () => {
  it("adds an endpoint, shows its secret once, logs a delivery, retries it and deletes the endpoint", async () => {
    await signInThroughPage(page, env.webUrl, ADMIN, PASSWORD);
    await page.evaluate(() => {
      location.hash = "#/admin/webhooks";
    });
    await page.locator("#webhooks-body[data-state=ready]").waitFor();
    await checkPage(page, "admin: webhooks, empty", "admin-webhooks-empty");

    // A refused form shows the problem by the field.
    await page.locator("#webhook-form input[name=url]").fill("https://hooks.example.com/x");
    await page.locator("#webhook-form button[type=submit]").click();
    await page.locator('#webhook-form [data-issue-for="events"]:not(:empty)').waitFor();

    await page.locator("#webhook-form input[name=url]").fill(receiverUrl);
    await page.locator('#webhook-form input[value="user.updated"]').check();
    await page.locator("#webhook-form button[type=submit]").click();
    secret = (await page.locator("#webhook-secret-value").textContent()) ?? "";
    expect(secret).toMatch(/^whsec_/);
    await page.locator("#webhook-endpoints li", { hasText: receiverUrl }).waitFor();
    await checkPage(page, "admin: webhooks, new secret", "admin-webhooks-secret");
    await page.locator("#webhook-secret-done").click();
    expect(await page.locator("#webhook-secret").count()).toBe(0);

    // An event: the admin renames themself (user.updated), which the worker delivers.
    await page.evaluate(async (base) => {
      await fetch(`${base}/api/auth/update-user`, {
        method: "POST",
        credentials: "include",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "Ada King" }),
      });
    }, env.baseUrl);
    await expect.poll(() => accepted.length, { timeout: 20_000 }).toBeGreaterThan(0);

    const endpoint = page.locator("#webhook-endpoints li", { hasText: receiverUrl });
    await endpoint.locator("summary", { hasText: "Delivery log" }).click();
    const delivered = endpoint.locator("li[data-state=succeeded]", { hasText: "user.updated" });
    await delivered.waitFor();
    await checkPage(page, "admin: webhooks, delivery log", "admin-webhooks-log");
    await delivered.locator("button", { hasText: "Retry" }).click();
    await expect.poll(() => accepted.length, { timeout: 20_000 }).toBe(2);
    expect(new Set(accepted).size).toBe(1);

    await endpoint.locator("button", { hasText: "Delete" }).click();
    await page.locator("#confirm-ok").click();
    await page.locator("#webhook-endpoints li", { hasText: receiverUrl }).waitFor({ state: "detached" });
    expect(problems).toEqual([]);
  });
});
