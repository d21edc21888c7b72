import { existsSync } from "node:fs";
import { rm, stat } from "node:fs/promises";
import path from "node:path";
import { ROOT } from "@app/stack";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openBrowser, pageScreenshotDir, STARTUP_MS, TEST_MS } from "./harness.js";
import { checkPage } from "./page-checks.js";

// A test run leaves the tracked docs/screenshots as they are: the page checks save their pictures
// under artifacts/ (gitignored), and only `pnpm screenshots` refreshes docs/screenshots.
const SHOT = "screenshot-output-probe";
const DOCS = path.join(ROOT, "docs", "screenshots");
const ARTIFACTS = path.join(ROOT, "artifacts", "screenshots", "pages");
const files = (dir: string) => [`${SHOT}-phone.png`, `${SHOT}-desktop.png`].map((f) => path.join(dir, f));

let browser: Browser;
let page: Page;
beforeAll(async () => {
  ({ browser, page } = await openBrowser());
}, STARTUP_MS);
afterAll(async () => {
  await browser?.close();
  for (const file of [...files(DOCS), ...files(ARTIFACTS)]) await rm(file, { force: true });
});

describe("the page checks' pictures", { timeout: TEST_MS }, () => {
  it("go to artifacts/screenshots/pages during a test run, never to docs/screenshots", async () => {
    // Under `pnpm screenshots` the two places swap; the probe's pictures are removed after.
    const [target, untouched] = process.env.SCREENSHOTS_TO_DOCS === "true" ? [DOCS, ARTIFACTS] : [ARTIFACTS, DOCS];
    for (const file of files(target)) await rm(file, { force: true });
    await page.setContent(
      '<!doctype html><html lang="en"><head><title>Probe</title></head><body><main><h1>Probe</h1><p>A plain page.</p></main></body></html>',
    );
    await checkPage(page, "probe", SHOT);
    for (const file of files(target)) expect((await stat(file)).size, file).toBeGreaterThan(0);
    for (const file of files(untouched)) expect(existsSync(file), file).toBe(false);
  });

  it("go to docs/screenshots only when `pnpm screenshots` asks for it", () => {
    expect(pageScreenshotDir({})).toBe(ARTIFACTS);
    expect(pageScreenshotDir({ CI: "true" })).toBe(ARTIFACTS);
    expect(pageScreenshotDir({ SCREENSHOTS_TO_DOCS: "true" })).toBe(DOCS);
  });
});
