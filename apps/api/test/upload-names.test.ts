import { readdir } from "node:fs/promises";
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, startTestApi, type TestApi } from "./helpers.js";
import { rawRequest } from "./raw-http.js";

// File names arrive as raw bytes in the part's Content-Disposition (RFC 7578 §4.2: UTF-8), and a
// cut-off upload must not leave bytes behind.
let t: TestApi;
beforeAll(async () => {
  t = await startTestApi({ env: { UPLOAD_MAX_BYTES: String(4 * 1024 * 1024), UPLOAD_ALLOWED_TYPES: "text/plain" } });
});
afterAll(async () => {
  await t?.close();
});

const BOUNDARY = "----names";

/** One multipart body with a file part whose filename bytes are exactly `name` in UTF-8. */
function body(name: string, content = "hello"): Buffer {
  return Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="`),
    Buffer.from(name, "utf8"),
    Buffer.from(`"\r\nContent-Type: text/plain\r\n\r\n${content}\r\n--${BOUNDARY}--\r\n`),
  ]);
}

async function upload(auth: string, name: string) {
  return rawRequest(`${t.url}/api/uploads`, {
    method: "POST",
    headers: [
      ["authorization", auth],
      ["content-type", `multipart/form-data; boundary=${BOUNDARY}`],
    ],
    body: body(name),
  });
}

describe("upload file names", () => {
  it("stores a UTF-8 name as sent", async () => {
    const u = await t.user();
    const res = await upload(u.auth.authorization, "résumé 履歴書.txt");
    expect(res.status).toBe(201);
    expect((res.json() as { filename: string }).filename).toBe("résumé 履歴書.txt");
  });

  it.each([
    ["right-to-left override", "invoice\u202Etxt.exe"],
    ["left-to-right isolate", "a\u2066b.txt"],
    ["right-to-left mark", "a\u200Fb.txt"],
    ["arabic letter mark", "a\u061Cb.txt"],
    ["control character", "a\u0007b.txt"],
    ["C1 control character", "a\u0085b.txt"],
    ["zero-width space", "invoice\u200B.txt"],
    ["zero-width joiner", "a\u200Db.txt"],
    ["word joiner", "a\u2060b.txt"],
    ["zero-width no-break space", "\uFEFFa.txt"],
    ["soft hyphen", "pay\u00ADpal.txt"],
    ["tag character", "a\u{E0041}b.txt"],
  ])("refuses a name with a %s (400) and keeps nothing", async (_label, name) => {
    const u = await t.user();
    const before = await readdir(t.config.uploadDir);
    const res = await upload(u.auth.authorization, name);
    expect(res.status).toBe(400);
    // A raw C0 byte already breaks the part header (bad_request); the others parse and are refused.
    expect((res.json() as { error: { code: string } }).error.code).toMatch(/^(validation_failed|bad_request)$/);
    expect(await readdir(t.config.uploadDir)).toEqual(before);
    expect(await t.db.prisma.upload.count({ where: { userId: u.id } })).toBe(0);
  });
});

describe("cut-off uploads", () => {
  it("deletes the partial file when the client aborts mid-file", async () => {
    const u = await t.user();
    const before = await readdir(t.config.uploadDir);
    const head = Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`,
    );
    const req = http.request(`${t.url}/api/uploads`, {
      method: "POST",
      headers: {
        authorization: u.auth.authorization,
        "content-type": `multipart/form-data; boundary=${BOUNDARY}`,
        "content-length": String(head.length + 3 * 1024 * 1024),
      },
    });
    req.on("error", () => undefined);
    req.write(head);
    req.write(Buffer.alloc(256 * 1024, "x"));
    // The partial file exists while the body arrives; then the client vanishes.
    await eventually(async () => (await readdir(t.config.uploadDir)).some((n) => n.endsWith(".partial")));
    req.destroy();
    await eventually(async () => (await readdir(t.config.uploadDir)).length === before.length);
    expect(await readdir(t.config.uploadDir)).toEqual(before);
  });
});
