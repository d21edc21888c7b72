import type { Page } from "@app/client";
import type { AppContext } from "./context.js";
import { h, replace } from "./dom.js";

/** Options of {@link pagedList}. */
export interface PagedListOptions<T> {
  /** The list element's id (its items get `data-id`). */
  id: string;
  /** Loads one page: the first with no cursor, the next ones with `x-next-cursor`'s value. */
  load(cursor: string | undefined): Promise<Page<T>>;
  row(item: T): HTMLElement;
  /** Shown while the list is empty. */
  empty: string;
}

/** A list that pages through a list route with a "Load more" button. */
export interface PagedList<T> {
  element: HTMLElement;
  /** Loads the first page again. */
  reload(): Promise<void>;
  /** Puts a new item on top (after a create). */
  prepend(item: T): void;
  /** Removes an item's row. */
  remove(id: string): void;
  /** Redraws an item's row in place (after an update). */
  update(id: string, item: T): void;
  /** Stops updating (route left). */
  stop(): void;
}

/** Builds a {@link PagedList}; the caller calls `reload()` once. */
export function pagedList<T>(ctx: AppContext, options: PagedListOptions<T>): PagedList<T> {
  const list = h("ul", { id: options.id, class: "list" });
  const more = h("button", { type: "button", class: "secondary", id: `${options.id}-more`, hidden: true }, "Load more");
  const empty = h("p", { class: "muted", id: `${options.id}-empty`, hidden: true }, options.empty);
  let cursor: string | null = null;
  let alive = true;
  const refresh = () => {
    empty.hidden = list.childElementCount > 0;
  };
  const load = async (first: boolean) => {
    const page = await options.load(first ? undefined : (cursor ?? undefined));
    if (!alive) return;
    if (first) replace(list);
    for (const item of page.items) list.append(options.row(item));
    cursor = page.nextCursor;
    more.hidden = !cursor;
    refresh();
    list.dataset.loaded = "true";
  };
  more.addEventListener("click", () => {
    more.disabled = true;
    load(false)
      .catch((e: unknown) => ctx.showError(e))
      .finally(() => {
        more.disabled = false;
      });
  });
  return {
    element: h("div", { class: "paged" }, empty, list, more),
    reload: () => load(true).catch((e: unknown) => ctx.showError(e)),
    prepend(item) {
      list.prepend(options.row(item));
      refresh();
    },
    update(id, item) {
      list.querySelector(`[data-id="${CSS.escape(id)}"]`)?.replaceWith(options.row(item));
    },
    remove(id) {
      list.querySelector(`[data-id="${CSS.escape(id)}"]`)?.remove();
      refresh();
    },
    stop() {
      alive = false;
    },
  };
}
