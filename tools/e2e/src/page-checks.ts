import { mkdir, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import type { CDPSession, Page } from "playwright-core";
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
 * One DevTools session per page, kept until the page closes: detaching any session from a page
 * turns Chromium's virtual authenticator environment off for it (WebAuthn.enable of another
 * session, which the passkey tests use, sign-in-methods.test.ts), so this one is never detached.
 */
const sessions = new WeakMap<Page, Promise<CDPSession>>();
function sessionOf(page: Page): Promise<CDPSession> {
  let session = sessions.get(page);
  if (!session) {
    session = page.context().newCDPSession(page);
    sessions.set(page, session);
  }
  return session;
}

/**
 * Runs axe-core in the page and keeps serious and critical findings. The script comes from the
 * local package and goes in through the DevTools protocol: the web app's CSP (`script-src 'self'`)
 * rightly refuses an inline `<script>`, which is what `addScriptTag({ path })` would add.
 */
export async function seriousViolations(page: Page): Promise<Finding[]> {
  if (!(await page.evaluate(() => "axe" in window))) {
    axeSource ??= readFile(AXE_PATH, "utf8");
    await (await sessionOf(page)).send("Runtime.evaluate", { expression: await axeSource });
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

/**
 * The narrowest a box holding text may be, unless its text is shorter: a title squeezed into a
 * 40 px column beside wide neighbours fails, a short status pill sized to its word does not.
 */
export const MIN_TEXT_BOX_PX = 120;
/** The narrowest a text field (input, textarea) may be: "New tas" is not a field. */
export const MIN_FIELD_PX = 160;
/** The narrowest a select may be. */
export const MIN_SELECT_PX = 72;
/** Lines of one character each, in one text, that mean a word is broken letter by letter. */
export const SINGLE_CHARACTER_LINES = 3;

/**
 * What a page does wrong with real content, beyond scrolling sideways: a visible text box narrower
 * than its text needs (up to {@link MIN_TEXT_BOX_PX}), a field narrower than {@link MIN_FIELD_PX}
 * (selects: {@link MIN_SELECT_PX}), and a text whose rendered lines hold a single character each
 * (a word broken letter by letter, which `overflow-wrap: anywhere` in a shrunken flex item does).
 * Each problem is one line naming the element.
 */
export function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(
    ({ minText, minField, minSelect, singleLines }) => {
      const problems: string[] = [];
      const name = (el: Element) => {
        const id = el.id ? `#${el.id}` : "";
        const cls = typeof el.className === "string" && el.className ? `.${el.className.trim().split(/\s+/).join(".")}` : "";
        const text = (el.textContent ?? "").trim().slice(0, 40);
        return `<${el.tagName.toLowerCase()}${id}${cls}>${text ? ` "${text}"` : ""}`;
      };
      const shown = (el: Element) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
      const skipped = (el: Element) => el.closest("script, style, noscript, template, select, textarea, .visually-hidden, [hidden]");
      const canvas = document.createElement("canvas").getContext("2d");
      const naturalWidth = (el: Element, text: string) => {
        if (!canvas) return 0;
        const style = getComputedStyle(el);
        canvas.font = style.font;
        const pre = /^pre/.test(style.whiteSpace) || style.whiteSpace === "break-spaces";
        const lines = pre ? text.split("\n") : [text.replace(/\s+/g, " ").trim()];
        return Math.max(...lines.map((line) => canvas.measureText(line).width));
      };
      /** The box a text's lines are laid out in: the nearest ancestor that is not display: inline. */
      const boxOf = (el: Element) => {
        let box: Element | null = el;
        while (box && getComputedStyle(box).display === "inline") box = box.parentElement;
        return box ?? el;
      };
      const reported = new Set<Element>();
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = node.textContent ?? "";
        const parent = node.parentElement;
        if (!parent || text.trim().length < 2 || skipped(parent) || !shown(parent)) continue;
        const box = boxOf(parent);
        const style = getComputedStyle(box);
        const inner = box.clientWidth - Number.parseFloat(style.paddingLeft) - Number.parseFloat(style.paddingRight);
        const needed = Math.min(naturalWidth(parent, text), minText);
        if (inner + 1 < needed && !reported.has(box)) {
          reported.add(box);
          problems.push(`${name(box)} is ${Math.round(inner)} px wide for text that needs ${Math.round(needed)} px`);
        }
        // One line per distinct top of the text's characters; count the lines holding one.
        const range = document.createRange();
        const lines = new Map<number, number>();
        const end = Math.min(text.length, 2000);
        for (let i = 0; i < end; i += 1) {
          if (/\s/.test(text[i] ?? "")) continue;
          range.setStart(node, i);
          range.setEnd(node, i + 1);
          const rect = range.getClientRects()[0];
          if (!rect) continue;
          const top = Math.round(rect.top);
          lines.set(top, (lines.get(top) ?? 0) + 1);
        }
        const single = [...lines.values()].filter((n) => n === 1).length;
        if (single >= singleLines) problems.push(`${name(parent)} is broken letter by letter (${single} lines of one character)`);
      }
      for (const field of document.querySelectorAll<HTMLElement>("input, textarea, select")) {
        if (field instanceof HTMLInputElement && /^(checkbox|radio|file|hidden|submit|button|reset|image|color|range)$/.test(field.type))
          continue;
        if (field.closest("[hidden], .visually-hidden") || !shown(field)) continue;
        const width = field.getBoundingClientRect().width;
        const least = field instanceof HTMLSelectElement ? minSelect : minField;
        if (width + 1 < least) problems.push(`${name(field)}[name=${field.getAttribute("name") ?? ""}] is ${Math.round(width)} px wide`);
      }
      return problems;
    },
    { minText: MIN_TEXT_BOX_PX, minField: MIN_FIELD_PX, minSelect: MIN_SELECT_PX, singleLines: SINGLE_CHARACTER_LINES },
  );
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
 * The checks every page gets, at 390×844 and at 1280×800: nothing scrolls sideways, no text box or
 * field is squeezed and no word is broken letter by letter ({@link layoutProblems}), and axe-core
 * finds no serious or critical violation; and with `shot` the page is saved as
 * {@link PAGE_SCREENSHOT_DIR}/<shot>-desktop.png and -phone.png. The viewport is back at desktop size after.
 */
export async function checkPage(page: Page, label: string, shot?: string): Promise<void> {
  if (shot) await mkdir(PAGE_SCREENSHOT_DIR, { recursive: true });
  await page.setViewportSize(PHONE);
  await settle(page);
  expect(await sidewaysOverflow(page), `${label}: scrolls sideways at ${PHONE.width}px`).toBeLessThanOrEqual(0);
  expect(await layoutProblems(page), `${label}: layout at phone size`).toEqual([]);
  expect(await seriousViolations(page), `${label}: axe at phone size`).toEqual([]);
  if (shot) await page.screenshot({ path: path.join(PAGE_SCREENSHOT_DIR, `${shot}-phone.png`) });
  await page.setViewportSize(DESKTOP);
  await settle(page);
  expect(await sidewaysOverflow(page), `${label}: scrolls sideways at ${DESKTOP.width}px`).toBeLessThanOrEqual(0);
  expect(await layoutProblems(page), `${label}: layout at desktop size`).toEqual([]);
  expect(await seriousViolations(page), `${label}: axe at desktop size`).toEqual([]);
  if (shot) await page.screenshot({ path: path.join(PAGE_SCREENSHOT_DIR, `${shot}-desktop.png`) });
}
