/**
 * A case-insensitive substring filter for Prisma that matches `text` literally. Prisma turns
 * `contains` into `ILIKE '%text%'` without escaping the pattern (github.com/prisma/prisma/issues/19506), so `%`, `_`
 * and the escape character itself (PostgreSQL's default, the backslash) are escaped here: a search
 * for `%` finds rows holding a percent sign, not every row.
 */
export function containsText(text: string): { contains: string; mode: "insensitive" } {
  return { contains: text.replace(/[\\%_]/g, (c) => `\\${c}`), mode: "insensitive" };
}
