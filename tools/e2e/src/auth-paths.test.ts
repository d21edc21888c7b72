import { generateKeyPair, SignJWT } from "jose";
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

let env: E2eStack;
let browser: Browser;
let page: Page;
const requests: { method: string; path: string; authorization: string | undefined }[] = [];
const email = freshEmail("auth");
const password = "correct horse battery";

beforeAll(async () => {
  [env, { browser, page }] = await Promise.all([startE2eStack(), openBrowser()]);
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.origin === env.baseUrl)
      requests.push({ method: request.method(), path: url.pathname, authorization: request.headers().authorization });
  });
}, STARTUP_MS);
afterAll(async () => {
  await browser?.close();
  await env?.stop();
});

async function signInForm(): Promise<void> {
  await page.locator("#signin-form input[name=email]").fill(email);
  await page.locator("#signin-form input[name=password]").fill(password);
  await page.locator("#signin-form button[type=submit]").click();
  await page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
}

async function signOut(): Promise<void> {
  await page.locator("#sign-out").click();
  await page.locator("#signin-form").waitFor();
}

/** A JWT that is well-formed and expired, signed by a key the service has never seen. */
async function expiredForeignToken(sub: string): Promise<string> {
  const { privateKey } = await generateKeyPair("EdDSA");
  const past = Math.floor(Date.now() / 1000) - 3600;
  return new SignJWT({ email })
    .setProtectedHeader({ alg: "EdDSA", kid: "throwaway" })
    .setSubject(sub)
    .setIssuer(env.baseUrl)
    .setAudience(env.baseUrl)
    .setIssuedAt(past - 3600)
    .setExpirationTime(past)
    .sign(privateKey);
}

const jwtSub = (token: string) => (JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString()) as { sub: string }).sub;

describe("sign-up, sign-in and sign-out from the web app's own origin", { timeout: TEST_MS }, () => {
  it("with no token stored, the app shows the sign-in page and business calls answer 401", async () => {
    expect(new URL(env.webUrl).origin).not.toBe(new URL(env.baseUrl).origin);
    await page.goto(env.webUrl);
    await page.locator("#signin-form").waitFor();
    expect(await storedToken(page)).toBeNull();
    const tasks = await pageFetch(page, `${env.baseUrl}/api/tasks`);
    expect(tasks.status).toBe(401);
    expect(JSON.parse(tasks.body)).toMatchObject({ ok: false, error: { code: "missing_token" } });
    await screenshot(page, "01-sign-in");
  });

  it("sign-up awaits get-session, stores the JWT in localStorage.authToken and sends it as a Bearer", async () => {
    requests.length = 0;
    await page.locator("#signup-form input[name=name]").fill("Ann Browser");
    await page.locator("#signup-form input[name=email]").fill(email);
    await page.locator("#signup-form input[name=password]").fill(password);
    await page.locator("#signup-form button[type=submit]").click();
    await page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
    const token = await storedToken(page);
    expect(token?.split(".")).toHaveLength(3);
    expect(await page.locator("#whoami").textContent()).toBe(email);

    const paths = requests.filter((r) => r.method !== "OPTIONS").map((r) => r.path);
    const firstBusiness = paths.indexOf("/api/tasks");
    expect(paths.indexOf("/api/auth/sign-up/email")).toBe(0);
    expect(paths.indexOf("/api/auth/get-session")).toBe(1);
    expect(firstBusiness).toBeGreaterThan(1);
    expect(requests.find((r) => r.path === "/api/tasks")?.authorization).toBe(`Bearer ${token}`);
    await screenshot(page, "02-signed-up");
  });

  it("sign-out removes the token; sign-in stores a fresh one after awaiting get-session", async () => {
    await signOut();
    expect(await storedToken(page)).toBeNull();
    requests.length = 0;
    await signInForm();
    const paths = requests.filter((r) => r.method !== "OPTIONS").map((r) => r.path);
    expect(paths.slice(0, 2)).toEqual(["/api/auth/sign-in/email", "/api/auth/get-session"]);
    expect(await storedToken(page)).toMatch(/^ey/);
  });

  it("wrong credentials show the service's error and store nothing", async () => {
    await signOut();
    await page.locator("#signin-form input[name=email]").fill(email);
    await page.locator("#signin-form input[name=password]").fill("not my password");
    await page.locator("#signin-form button[type=submit]").click();
    const error = await page.locator("#signin-form .form-error:not(:empty)").textContent();
    expect(error).toBe("That email and password do not match an account.");
    expect(await storedToken(page)).toBeNull();
    await signInForm();
  });
});

describe("401 paths", { timeout: TEST_MS }, () => {
  it("token removed: business calls answer 401 with the cookie alone; the client recovers through get-session", async () => {
    const before = (await storedToken(page)) ?? "";
    await page.evaluate(() => localStorage.removeItem("authToken"));
    // The session cookie is sent (credentials: include) but business routes never read it.
    const raw = await pageFetch(page, `${env.baseUrl}/api/tasks`, { credentials: "include" });
    expect(raw.status).toBe(401);
    requests.length = 0;
    // The page's next business call (opening Projects) meets the 401 and asks get-session.
    await page.evaluate(() => {
      location.hash = "#/projects";
    });
    await page.locator("#project-list[data-loaded]").waitFor({ state: "attached" });
    const after = await storedToken(page);
    expect(after).toMatch(/^ey/);
    expect(jwtSub(after ?? "")).toBe(jwtSub(before));
    const paths = requests.filter((r) => r.method !== "OPTIONS").map((r) => r.path);
    expect(paths.slice(0, 3)).toEqual(["/api/projects", "/api/auth/get-session", "/api/projects"]);
    await page.evaluate(() => {
      location.hash = "#/tasks";
    });
    await page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
  });

  it("expired token: 401, then a fresh token from get-session while the cookie is valid", async () => {
    const current = (await storedToken(page)) ?? "";
    const expired = await expiredForeignToken(jwtSub(current));
    const raw = await pageFetch(page, `${env.baseUrl}/api/me`, { headers: { authorization: `Bearer ${expired}` } });
    expect(raw.status).toBe(401);
    await page.evaluate((t) => localStorage.setItem("authToken", t), expired);
    await page.reload();
    await page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
    const fresh = await storedToken(page);
    expect(fresh).not.toBe(expired);
    expect(jwtSub(fresh ?? "")).toBe(jwtSub(current));
  });

  it("expired token after sign-out: the 401 stands, the token is removed and the sign-in page shows", async () => {
    const sub = jwtSub((await storedToken(page)) ?? "");
    await signOut();
    await page.evaluate((t) => localStorage.setItem("authToken", t), await expiredForeignToken(sub));
    await page.reload();
    await page.locator("#signin-form").waitFor();
    expect(await storedToken(page)).toBeNull();
    const session = await pageFetch(page, `${env.baseUrl}/api/auth/get-session`, { method: "POST", credentials: "include" });
    expect(session.status).toBe(401);
    await screenshot(page, "09-signed-out-after-401");
  });
});
