import { NEXT_CURSOR_HEADER, type PageQuery } from "@app/contracts";
import { AppError } from "@app/http-kit";

/** One page of a keyset-paginated list. */
export interface Page<T> {
  items: T[];
  nextCursor: string | undefined;
}

/** Encodes the last id of a page as an opaque cursor. */
export function encodeCursor(id: string): string {
  return Buffer.from(JSON.stringify({ id }), "utf8").toString("base64url");
}

/**
 * Text that can be a row id: well-formed Unicode (no lone surrogate, which PostgreSQL cannot
 * encode) and no control characters (NUL is refused by PostgreSQL text). JSON escapes such as
 * `\ud800` or `\u0000` inside a cursor or a WebSocket message would otherwise reach the query.
 */
export function isIdText(value: string): boolean {
  return !/[\p{Cs}\p{Cc}]/u.test(value);
}

/** Decodes a cursor; 400 `validation_failed` when it was not made by {@link encodeCursor}. */
export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { id?: unknown };
    if (typeof value.id === "string" && value.id.length > 0 && value.id.length <= 100 && isIdText(value.id)) return value.id;
  } catch {
    // fall through
  }
  throw new AppError("validation_failed", "invalid query: cursor", { issues: [{ path: "cursor", message: "cursor is not valid" }] });
}

/**
 * Runs a keyset query (`id < cursor`, newest first) for one page: fetches `limit + 1` rows to know
 * whether a next page exists.
 */
export async function keysetPage<T extends { id: string }>(
  query: PageQuery,
  fetch: (args: { take: number; before: string | undefined }) => Promise<T[]>,
): Promise<Page<T>> {
  const rows = await fetch({ take: query.limit + 1, before: decodeCursor(query.cursor) });
  const items = rows.slice(0, query.limit);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > query.limit && last ? encodeCursor(last.id) : undefined };
}

/** Where a page is answered: the request's path and query (for the link) and its response. */
export interface PageTarget {
  req: { originalUrl: string };
  res: { setHeader(name: string, value: string): unknown };
}

/**
 * Puts a page's next cursor into the response headers (`x-next-cursor` and `Link: <...>; rel="next"`)
 * and returns the items: list routes always answer `ok([...])`.
 */
export function pageResponse<T>(page: Page<T>, { req, res }: PageTarget): T[] {
  if (page.nextCursor) {
    const url = new URL(req.originalUrl, "http://placeholder");
    url.searchParams.set("cursor", page.nextCursor);
    res.setHeader(NEXT_CURSOR_HEADER, page.nextCursor);
    res.setHeader("link", `<${url.pathname}${url.search}>; rel="next"`);
  }
  return page.items;
}
