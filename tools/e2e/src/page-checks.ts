import { mkdir, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import type { Page } from "playwright-core";
import { expect } from "vitest";
import { pageScreenshotDir } from "./harness.js";

/** Where checkPage saves `<page>-<desktop|phone>.png`: artifacts/ in a test run (harness.ts). */
export const PAGE_SCREENSHOT_DIR = pageScreenshotDir();

/** The two screen sizes every page is checked at. */
export const DESKTOP = { width: 1280, height: 800 } as const;
export const PHONE = { width: 390, height: 844 } as const;

const AXE_PATH = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

/** One axe finding, trimmed to what a failure message needs. */
interface Finding {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

let axeSource: Promise<string> | undefined;

/**
 * Runs axe-core in the page and keeps serious and critical findings. The script comes from the
 * local package and goes in through the DevTools protocol: the web app's CSP (`script-src 'self'`)
 * rightly refuses an inline `<script>`, which is what `addScriptTag({ path })` would add.
 */
export async function seriousViolations(page: Page): Promise<Finding[]> {
  if (!(await page.evaluate(() => "axe" in window))) {
    axeSource ??= readFile(AXE_PATH, "utf8");
    const cdp = await page.context().newCDPSession(page);
    try {
      await cdp.send("Runtime.evaluate", { expression: await axeSource });
    } finally {
      await cdp.detach();
    }
  }
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: typeof import("axe-core") }).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => ({ id: v.id, impact: v.impact ?? null, help: v.help, targets: v.nodes.map((n) => n.target.join(" ")) }));
  });
}

/** How far the page scrolls sideways (0 when it fits the viewport). */
export function sidewaysOverflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
}

/** Scrolls to the top and waits two frames, so a resize has been laid out and painted. */
async function settle(page: Page): Promise<void> {
  await page.evaluate(
    () =>
      new Promise((resolve) => {
        window.scrollTo(0, 0);
        requestAnimationFrame(() => requestAnimationFrame(resolve));
      }),
  );
}

/**
 * The checks every page gets: at 390×844 nothing scrolls sideways, axe-core finds no serious or
 * critical violation (at both sizes), and with `shot` the page is saved as
 * {@link PAGE_SCREENSHOT_DIR}/<shot>-desktop.png and -phone.png. The viewport is back at desktop size after.
 */
export async function checkPage(page: Page, label: string, shot?: string): Promise<void> {
  if (shot) await mkdir(PAGE_SCREENSHOT_DIR, { recursive: true });
  await page.setViewportSize(PHONE);
  await settle(page);
  expect(await sidewaysOverflow(page), `${label}: scrolls sideways at ${PHONE.width}px`).toBeLessThanOrEqual(0);
  expect(await seriousViolations(page), `${label}: axe at phone size`).toEqual([]);
  if (shot) await page.screenshot({ path: path.join(PAGE_SCREENSHOT_DIR, `${shot}-phone.png`) });
  await page.setViewportSize(DESKTOP);
  await settle(page);
  expect(await seriousViolations(page), `${label}: axe at desktop size`).toEqual([]);
  if (shot) await page.screenshot({ path: path.join(PAGE_SCREENSHOT_DIR, `${shot}-desktop.png`) });
}
