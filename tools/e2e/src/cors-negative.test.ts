import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type E2eStack,
  freshEmail,
  openBrowser,
  pageFetch,
  STARTUP_MS,
  screenshot,
  startE2eStack,
  storedToken,
  TEST_MS,
} from "./harness.js";

// The contract's CORS rule, proved by breaking it: with set-auth-jwt left out of the exposed
// headers (CORS_EXPOSE_AUTH_HEADER=false, a switch that exists only for this test), a browser on
// the web app's origin cannot read the JWT, so nothing is stored and business calls answer 401.
let env: E2eStack;
let browser: Browser;
let page: Page;
const email = freshEmail("cors");
const password = "correct horse battery";
const headerSeen: (string | undefined)[] = [];

beforeAll(async () => {
  [env, { browser, page }] = await Promise.all([startE2eStack({ CORS_EXPOSE_AUTH_HEADER: "false" }), openBrowser()]);
  const signUp = await fetch(`${env.baseUrl}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password, name: "Cors" }),
  });
  expect(signUp.status).toBe(200);
  page.on("response", (response) => {
    if (new URL(response.url()).pathname === "/api/auth/get-session" && response.request().method() === "POST") {
      headerSeen.push(response.headers()["set-auth-jwt"]);
    }
  });
  await page.goto(env.webUrl);
  await page.locator("#signin-form").waitFor();
}, STARTUP_MS);
afterAll(async () => {
  await browser?.close();
  await env?.stop();
});

describe("set-auth-jwt missing from the exposed CORS headers", { timeout: TEST_MS }, () => {
  it("the JWT is on the wire, but the page cannot read it", async () => {
    const signIn = await pageFetch(page, `${env.baseUrl}/api/auth/sign-in/email`, {
      method: "POST",
      credentials: "include",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password }),
    });
    expect(signIn.status).toBe(200);
    headerSeen.length = 0;
    const session = await pageFetch(page, `${env.baseUrl}/api/auth/get-session`, { method: "POST", credentials: "include" });
    expect(session.status).toBe(200);
    expect(JSON.parse(session.body)).toMatchObject({ user: { email } });
    expect(session.headers["set-auth-jwt"]).toBeNull(); // what the page's code sees
    expect(headerSeen).toHaveLength(1);
    expect(headerSeen[0]?.split(".")).toHaveLength(3); // what the network carried
  });

  it("signing in through the app stores no authToken, says why, and business calls answer 401", async () => {
    await page.locator("#signin-form input[name=email]").fill(email);
    await page.locator("#signin-form input[name=password]").fill(password);
    await page.locator("#signin-form button[type=submit]").click();
    const error = await page.locator("#signin-form .form-error:not(:empty)").textContent();
    expect(error).toContain("set-auth-jwt");
    expect(await storedToken(page)).toBeNull();
    expect(await page.locator("#task-list").count()).toBe(0);
    const tasks = await pageFetch(page, `${env.baseUrl}/api/tasks`, { credentials: "include" });
    expect(tasks.status).toBe(401);
    await screenshot(page, "10-cors-header-not-exposed");
  });
});
