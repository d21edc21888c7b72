import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openBrowser, TEST_MS } from "./harness.js";
import { checkPage, layoutProblems, PHONE } from "./page-checks.js";

// The checks every page of the web app gets (page-checks.ts), on a page of their own in Chromium:
// each kind of problem is added to a clean page and must be reported.
let browser: Browser;
let page: Page;

beforeAll(async () => {
  ({ browser, page } = await openBrowser());
  await page.setContent(
    '<!doctype html><html lang="en"><head><title>Checks</title><meta name="viewport" content="width=device-width, initial-scale=1"></head>' +
      "<body><main><h1>Checks</h1><p>A clean page.</p></main></body></html>",
  );
}, TEST_MS);
afterAll(async () => {
  await browser?.close();
});

describe("the page checks themselves", { timeout: TEST_MS }, () => {
  it("fail on a page that scrolls sideways at phone width or has an unlabelled field", async () => {
    await page.evaluate(() => {
      const wide = document.createElement("div");
      wide.id = "too-wide";
      wide.style.width = "600px";
      wide.textContent = "wide";
      document.querySelector("main")?.append(wide);
    });
    await expect(checkPage(page, "too wide")).rejects.toThrow(/scrolls sideways/);
    await page.evaluate(() => {
      document.getElementById("too-wide")?.remove();
      const input = document.createElement("input");
      input.id = "unlabelled";
      input.style.width = "240px";
      document.querySelector("main")?.append(input);
    });
    await expect(checkPage(page, "unlabelled")).rejects.toThrow(/axe/);
    await page.evaluate(() => document.getElementById("unlabelled")?.remove());
    await checkPage(page, "clean again");
  });

  it("fail on a title squeezed beside a wide neighbour, a squeezed field and a word broken letter by letter", async () => {
    await page.setViewportSize(PHONE);
    await page.evaluate(() => {
      const main = document.querySelector("main");
      // The task list's old row: a flex: 1 title beside parts that take the rest of the line.
      const row = document.createElement("div");
      row.id = "squeezed-row";
      row.style.cssText = "display: flex; width: 340px";
      const title = document.createElement("a");
      title.href = "#";
      title.style.cssText = "flex: 1; overflow-wrap: anywhere";
      title.textContent = "Review the quarterly report and send the notes";
      const wide = document.createElement("span");
      wide.style.cssText = "flex: 0 0 300px";
      wide.textContent = "pending";
      row.append(title, wide);
      const field = document.createElement("input");
      field.id = "squeezed-field";
      field.setAttribute("aria-label", "New task title");
      field.style.cssText = "box-sizing: border-box; width: 64px";
      const letters = document.createElement("p");
      letters.id = "letters";
      letters.style.cssText = "width: 6px; overflow-wrap: anywhere";
      letters.textContent = "Donaudampfschiff";
      main?.append(row, field, letters);
    });
    const problems = await layoutProblems(page);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^<a> "Review the quarterly.*" is \d+ px wide for text that needs 120 px$/),
        expect.stringMatching(/^<input#squeezed-field>\[name=\] is 64 px wide$/),
        expect.stringMatching(/^<p#letters> "Donaudampfschiff" is broken letter by letter \(16 lines of one character\)$/),
      ]),
    );
    await expect(checkPage(page, "squeezed")).rejects.toThrow(/squeezed: layout at phone size/);
    await page.evaluate(() => {
      for (const id of ["squeezed-row", "squeezed-field", "letters"]) document.getElementById(id)?.remove();
    });
    expect(await layoutProblems(page)).toEqual([]);
  });
});
