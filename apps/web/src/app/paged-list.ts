import type { Page } from "@app/client";
import { h, replace } from "./dom.js";
import { describeError } from "./messages.js";
import { reportSessionEnd } from "./session.js";

/** Options of {@link pagedList}. */
export interface PagedListOptions<T> {
  /** The list element's id (its items get `data-id`). */
  id: string;
  /** Loads one page: the first with no cursor, the next ones with `x-next-cursor`'s value. */
  load(cursor: string | undefined): Promise<Page<T>>;
  row(item: T): HTMLElement;
  /** Shown while the list is empty. */
  empty: string;
  /** Shown while the first page loads (default "Loading…"). */
  loading?: string;
}

/** A list that pages through a list route with a "Load more" button. */
export interface PagedList<T> {
  element: HTMLElement;
  /** Loads the first page again. */
  reload(): Promise<void>;
  /** Puts a new item on top (after a create). */
  prepend(item: T): void;
  /** Puts a new item at the end (a list read oldest first, such as a chat). */
  append(item: T): void;
  /** Removes an item's row. */
  remove(id: string): void;
  /** Redraws an item's row in place (after an update). */
  update(id: string, item: T): void;
  /** Stops updating (route left). */
  stop(): void;
}

/** Where a list is: `data-state` on its element, so pages and tests can tell. */
export type ListState = "loading" | "ready" | "empty" | "error";

/**
 * Builds a {@link PagedList}; the caller calls `reload()` once. It says what is happening in its
 * own place on the page: "Loading…" until the first page arrives, its `empty` sentence when there
 * are no rows, and when a page cannot be loaded the reason with a "Try again" button that loads
 * that page again. A refusal that ends the session opens the signed-out page instead (session.ts).
 */
export function pagedList<T>(options: PagedListOptions<T>): PagedList<T> {
  const list = h("ul", { id: options.id, class: "list" });
  const more = h("button", { type: "button", class: "secondary", id: `${options.id}-more`, hidden: true }, "Load more");
  const empty = h("p", { class: "muted", id: `${options.id}-empty`, hidden: true }, options.empty);
  const loading = h("p", { class: "muted", id: `${options.id}-loading`, role: "status" }, options.loading ?? "Loading…");
  const problem = h("p", { class: "list-error-text" });
  const retry = h("button", { type: "button", class: "secondary small", id: `${options.id}-retry` }, "Try again");
  const failure = h("div", { class: "list-error", id: `${options.id}-error`, role: "alert", hidden: true }, problem, retry);
  const element = h("div", { class: "paged", "data-state": "loading" }, loading, empty, failure, list, more);
  let cursor: string | null = null;
  let alive = true;
  /** The page "Try again" asks for: the first one, or the next one after a failed "Load more". */
  let retryFirst = true;
  const show = (state: ListState) => {
    element.dataset.state = state;
    loading.hidden = state !== "loading";
    failure.hidden = state !== "error";
    empty.hidden = state !== "empty";
  };
  const settled = () => show(list.childElementCount > 0 ? "ready" : "empty");
  const load = async (first: boolean) => {
    if (first && list.childElementCount === 0) show("loading");
    else failure.hidden = true;
    more.disabled = true;
    try {
      const page = await options.load(first ? undefined : (cursor ?? undefined));
      if (!alive) return;
      if (first) replace(list);
      for (const item of page.items) list.append(options.row(item));
      cursor = page.nextCursor;
      more.hidden = !cursor;
      settled();
      list.dataset.loaded = "true";
    } catch (error) {
      if (!alive || reportSessionEnd(error)) return;
      retryFirst = first;
      problem.textContent = describeError(error);
      more.hidden = true;
      show("error");
    } finally {
      more.disabled = false;
    }
  };
  more.addEventListener("click", () => void load(false));
  retry.addEventListener("click", () => void load(retryFirst));
  return {
    element,
    reload: () => load(true),
    prepend(item) {
      list.prepend(options.row(item));
      if (element.dataset.state !== "error") settled();
    },
    append(item) {
      list.append(options.row(item));
      if (element.dataset.state !== "error") settled();
    },
    update(id, item) {
      list.querySelector(`[data-id="${CSS.escape(id)}"]`)?.replaceWith(options.row(item));
    },
    remove(id) {
      list.querySelector(`[data-id="${CSS.escape(id)}"]`)?.remove();
      if (element.dataset.state !== "error") settled();
    },
    stop() {
      alive = false;
    },
  };
}
