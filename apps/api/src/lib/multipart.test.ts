import { describe, expect, it } from "vitest";
import { isAllowedType, safeFilename } from "./multipart.js";

describe("multipart helpers", () => {
  it("matches allowed types exactly or by family wildcard", () => {
    expect(isAllowedType("image/png", ["image/*"])).toBe(true);
    expect(isAllowedType("IMAGE/PNG", ["image/png"])).toBe(true);
    expect(isAllowedType("text/html", ["text/plain", "image/*"])).toBe(false);
    expect(isAllowedType("imagex/png", ["image/*"])).toBe(false);
  });

  it("keeps only a safe base name", () => {
    expect(safeFilename("../../etc/passwd")).toBe("passwd");
    expect(safeFilename("C:\\Users\\me\\report.pdf")).toBe("report.pdf");
    expect(safeFilename('a"b\u0000c\nd.txt')).toBe("abcd.txt");
    expect(safeFilename(undefined)).toBe("file");
    expect(safeFilename("x".repeat(400))).toHaveLength(255);
  });
});
