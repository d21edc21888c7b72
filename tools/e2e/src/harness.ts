import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { launchStack, ROOT, type RunningStack } from "@app/stack";
import pg from "pg";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";

/** Where screenshots go (CI uploads artifacts/). */
export const SCREENSHOT_DIR = path.join(ROOT, "artifacts", "screenshots");

/**
 * Where the page checks save each page's picture (`<page>-<desktop|phone>.png`, page-checks.ts):
 * artifacts/screenshots/pages, so a test run leaves the tracked docs/screenshots as they are.
 * `pnpm screenshots` sets `SCREENSHOTS_TO_DOCS=true` to refresh docs/screenshots on purpose
 * (docs/operations.md).
 */
export function pageScreenshotDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.SCREENSHOTS_TO_DOCS === "true" ? path.join(ROOT, "docs", "screenshots") : path.join(SCREENSHOT_DIR, "pages");
}

/** Debian's Chromium unless CHROME_PATH names another (never a downloaded browser). */
export const CHROME_PATH = process.env.CHROME_PATH ?? "/usr/bin/chromium";

/** Generous waits: a 2-core CI machine runs a whole stack and a browser per test file. */
export const WAIT_MS = 20_000;
/** Per test (several waits each) and for starting a stack and a browser. */
export const TEST_MS = 60_000;
export const STARTUP_MS = 120_000;

/** A stack with the web app on its own origin, on a fresh database. */
export interface E2eStack {
  stack: RunningStack;
  database: TestDatabase;
  /** The web app's origin (`http://localhost:<port>`). */
  webUrl: string;
  /** The service's base URL (`http://localhost:<port>`), another origin. */
  baseUrl: string;
  stop(): Promise<void>;
}

/** Options of {@link startE2eStack} beyond the services' environment. */
export interface E2eStackOptions {
  /**
   * Run the sample MCP server in the test process (tools/stack/src/mcp-sample.ts, as
   * `MCP_SAMPLE=true pnpm start` does): the API may then reach private URLs, and its URL is
   * `stack.mcpSample.url`.
   */
  mcpSample?: boolean;
  /**
   * Run the local OpenID Provider in the test process (tools/stack/src/local-idp.ts, as
   * `LOCAL_IDP=true pnpm start` does): identity offers it as the provider `local` ("Local IdP").
   */
  localIdp?: boolean;
}

/** Starts identity, API, gateway and the web app's server; `env` goes to every service. */
export async function startE2eStack(env: Record<string, string> = {}, options: E2eStackOptions = {}): Promise<E2eStack> {
  const database = await createTestDatabase();
  const uploads = await mkdtemp(path.join(os.tmpdir(), "e2e-uploads-"));
  const lines: string[] = [];
  let stack: RunningStack;
  try {
    stack = await launchStack({
      databaseUrl: database.url,
      port: 0,
      authSecret: randomBytes(32).toString("base64url"),
      dataEncryptionKey: randomBytes(32).toString("base64url"),
      env: { LOG_LEVEL: "warn", UPLOAD_DIR: uploads, ...env },
      // Each service as its own database role, as in production (docs/database-roles.md).
      envFor: (name): Record<string, string> =>
        name.startsWith("identity")
          ? { DATABASE_URL: database.identityUrl }
          : name.startsWith("api")
            ? { DATABASE_URL: database.apiUrl }
            : {},
      web: { port: 0 },
      ...(options.mcpSample ? { mcpSample: true } : {}),
      ...(options.localIdp ? { localIdp: { port: 0 } } : {}),
      onLine: (name, line) => lines.push(`${name} ${line}`),
    });
  } catch (error) {
    await database.drop();
    await rm(uploads, { recursive: true, force: true });
    throw new Error(`stack did not start: ${(error as Error).message}\n${lines.slice(-30).join("\n")}`);
  }
  const webUrl = stack.webUrl ?? "";
  return {
    stack,
    database,
    webUrl,
    baseUrl: stack.baseUrl,
    async stop() {
      await stack.stop();
      await database.drop();
      await rm(uploads, { recursive: true, force: true });
    },
  };
}

/** Launches headless Chromium (a fresh temporary profile per launch) and opens one page. */
export async function openBrowser(): Promise<{ browser: Browser; context: BrowserContext; page: Page }> {
  if (!existsSync(CHROME_PATH)) {
    throw new Error(`no Chromium at ${CHROME_PATH}: install Debian's (apt-get install -y chromium) or set CHROME_PATH`);
  }
  const browser = await chromium.launch({
    executablePath: CHROME_PATH,
    args: [
      "--headless=new",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
    timeout: 60_000,
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(WAIT_MS);
  const page = await context.newPage();
  return { browser, context, page };
}

/** Saves a full-page screenshot as artifacts/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/** The page's `localStorage.authToken`. */
export function storedToken(page: Page): Promise<string | null> {
  return page.evaluate(() => localStorage.getItem("authToken"));
}

/** A `fetch` run inside the page (so from the web app's origin, under the browser's CORS rules). */
export function pageFetch(
  page: Page,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; credentials?: "include" | "omit" } = {},
): Promise<{ status: number; body: string; headers: Record<string, string | null> }> {
  return page.evaluate(
    async ({ url, init }) => {
      const res = await fetch(url, init);
      const headers: Record<string, string | null> = {};
      for (const name of ["set-auth-jwt", "x-request-id", "content-type"]) headers[name] = res.headers.get(name);
      return { status: res.status, body: await res.text(), headers };
    },
    { url, init },
  );
}

/** Grants a role in user_role, as `pnpm admin:grant` does. */
export async function grantRole(databaseUrl: string, email: string, role: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`INSERT INTO user_role (user_id, role) SELECT id, $2 FROM "user" WHERE email = $1 ON CONFLICT DO NOTHING`, [
      email,
      role,
    ]);
  } finally {
    await client.end();
  }
}

/** A fresh address for a test user. */
export function freshEmail(prefix: string): string {
  return `${prefix}-${randomBytes(5).toString("hex")}@example.com`;
}
