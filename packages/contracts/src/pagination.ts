import { z } from "zod";

/** Default page size of list routes. */
export const DEFAULT_PAGE_LIMIT = 20;
/** Largest page size of list routes. */
export const MAX_PAGE_LIMIT = 100;

/**
 * Response header that carries the opaque cursor of the next page. List routes answer
 * `ok([...items])` (data is always the array) and put the cursor here and in a `Link: <...>; rel="next"`
 * header; no header means there is no next page.
 */
export const NEXT_CURSOR_HEADER = "x-next-cursor";

/** Query of every list route: `?limit=` (1..100, default 20) and `?cursor=` (opaque, from {@link NEXT_CURSOR_HEADER}). */
export const pageQuery = z.object({
  limit: z.coerce
    .number({ error: "limit must be a number" })
    .int("limit must be an integer")
    .min(1, "limit must be at least 1")
    .max(MAX_PAGE_LIMIT, `limit must be at most ${MAX_PAGE_LIMIT}`)
    .default(DEFAULT_PAGE_LIMIT),
  cursor: z.string().min(1).max(200).optional(),
});
export type PageQuery = z.infer<typeof pageQuery>;

/** Path parameters of routes on one resource: `/:id`. */
export const idParams = z.strictObject({ id: z.string().min(1).max(100) });
export type IdParams = z.infer<typeof idParams>;

/** An ISO-8601 timestamp as every response carries it. */
export const timestampSchema = z.string().describe("ISO-8601 timestamp");
