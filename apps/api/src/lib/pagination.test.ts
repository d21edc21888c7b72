import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor, keysetPage, pageResponse } from "./pagination.js";

describe("keyset pagination", () => {
  it("round-trips cursors and rejects foreign ones with 400", () => {
    expect(decodeCursor(encodeCursor("abc"))).toBe("abc");
    expect(decodeCursor(undefined)).toBeUndefined();
    expect(() => decodeCursor("not-a-cursor")).toThrow(expect.objectContaining({ code: "validation_failed", status: 400 }));
  });

  it("fetches limit + 1 rows and sets x-next-cursor and Link only when more exist", async () => {
    const rows = ["e", "d", "c", "b", "a"].map((id) => ({ id }));
    const fetchRows = async ({ take, before }: { take: number; before: string | undefined }) =>
      rows.filter((r) => before === undefined || r.id < before).slice(0, take);
    const first = await keysetPage({ limit: 2 }, fetchRows);
    expect(first.items.map((r) => r.id)).toEqual(["e", "d"]);
    const headers: Record<string, string> = {};
    const items = pageResponse(first, {
      req: { originalUrl: "/api/tasks?limit=2" },
      res: {
        setHeader: (k, v) => {
          headers[k] = v;
        },
      },
    });
    expect(items).toEqual(first.items);
    expect(headers["x-next-cursor"]).toBe(first.nextCursor);
    expect(headers.link).toBe(`</api/tasks?limit=2&cursor=${first.nextCursor}>; rel="next"`);
    const last = await keysetPage({ limit: 3, cursor: encodeCursor("c") }, fetchRows);
    expect(last.items.map((r) => r.id)).toEqual(["b", "a"]);
    expect(last.nextCursor).toBeUndefined();
  });
});
