import { expect } from "vitest";

/**
 * Realistic content for the page checks: what people really type and paste. Pages checked on
 * empty data hid a 40 px title column and a 726 px wide generate output, so every page is checked
 * holding long titles, long unbroken words, long URLs and more than one page of rows.
 */

/** A long word with no break opportunity (a real German compound). */
export const LONG_WORD = "Donaudampfschifffahrtsgesellschaftskapitänswitwenrentenversicherung";
/** A long URL as people paste it, with no break opportunity either. */
export const LONG_URL =
  "https://docs.example.com/projects/website-relaunch/spring-campaign/drafts/2026-03-14T09:30:00Z/" +
  "landing-page-copy-final-final-v7?utm_source=newsletter&utm_medium=email&utm_campaign=spring_relaunch_2026";
/** More rows than one page of a list (20), so "Load more" shows too. */
export const ROWS = 55;

/** A sentence of ordinary length with a long word and a URL in it. */
export function longTitle(i: number): string {
  return `Review the ${LONG_WORD} contract (${i}) and send the notes to ${LONG_URL} before Friday`;
}

/** A name (of a project, an agent, a chat, a person) with a long word in it, under 200 characters. */
export function longName(i: number): string {
  return `${LONG_WORD} spring relaunch ${i}`;
}

/** A paragraph of several sentences, a long word and a URL (chat and task messages, instructions). */
export function longText(i: number): string {
  return [
    `Message ${i}: the spring relaunch needs a final read before it goes out to every subscriber on the list.`,
    `Check the paragraph about the ${LONG_WORD} and keep the tone friendly but short.`,
    `The draft lives at ${LONG_URL} and the older one is linked from there.`,
  ].join(" ");
}

/** A file name as a phone camera or an export tool writes it. */
export function longFilename(i: number): string {
  return `Quarterly-report-${LONG_WORD}-export-2026-03-14-final-${i}.csv`;
}

/** JSON calls to the service with a bearer JWT, from outside the browser. */
export interface Seeder {
  post(path: string, body: unknown): Promise<{ id: string }>;
  upload(path: string, form: FormData): Promise<{ id: string }>;
}

/** A {@link Seeder} for the service at `baseUrl` acting with `token`. */
export function seeder(baseUrl: string, token: () => Promise<string | null>): Seeder {
  const call = async (path: string, init: RequestInit & { headers?: Record<string, string> }) => {
    const res = await fetch(`${baseUrl}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${(await token()) ?? ""}`, ...init.headers },
    });
    const text = await res.text();
    expect(res.status, `${path}: ${text.slice(0, 200)}`).toBe(201);
    const json = JSON.parse(text) as { data?: { id: string }; id?: string };
    return { id: json.data?.id ?? json.id ?? "" };
  };
  return {
    post: (path, body) => call(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
    upload: (path, form) => call(path, { method: "POST", body: form }),
  };
}

/** A form holding one CSV file called {@link longFilename}. */
export function csvForm(field: string, i: number): FormData {
  const form = new FormData();
  form.append(field, new Blob([`name,value\nrow ${i},${i}\n`], { type: "text/csv" }), longFilename(i));
  return form;
}

/** Runs `make(i)` for i = 1..count, one after the other (rows are then listed in a fixed order). */
export async function times(count: number, make: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = 1; i <= count; i += 1) await make(i);
}
