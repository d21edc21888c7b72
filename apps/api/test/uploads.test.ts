import { readdir } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApi, type TestApi } from "./helpers.js";

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi({ env: { UPLOAD_MAX_BYTES: "1024", UPLOAD_ALLOWED_TYPES: "text/plain,image/*" } });
});
afterAll(async () => {
  await t?.close();
});

function form(content: string, type: string, name = "f.txt", field = "file"): FormData {
  const f = new FormData();
  f.append(field, new Blob([content], { type }), name);
  return f;
}

describe("uploads", () => {
  it("stores a file (raw 201) and streams it back to its owner only", async () => {
    const u = await t.user();
    const other = await t.user();
    const res = await fetch(`${t.url}/api/uploads`, {
      method: "POST",
      headers: u.auth,
      body: form("hello upload", "text/plain", "../../etc/notes.txt"),
    });
    expect(res.status).toBe(201);
    const up = (await res.json()) as { id: string; filename: string; size: number; sha256: string; contentType: string };
    expect(up).toMatchObject({ filename: "notes.txt", size: 12, contentType: "text/plain" });
    // Beside the files only the instances' leases (src/uploads/instance-lease.ts).
    expect(await readdir(t.config.uploadDir)).toEqual([".instances", up.id]);
    const file = await fetch(`${t.url}/api/uploads/${up.id}`, { headers: u.auth });
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toContain("text/plain");
    expect(file.headers.get("x-content-type-options")).toBe("nosniff");
    expect(file.headers.get("content-disposition")).toContain("attachment");
    expect(await file.text()).toBe("hello upload");
    expect((await fetch(`${t.url}/api/uploads/${up.id}`, { headers: other.auth })).status).toBe(404);
    expect((await fetch(`${t.url}/api/uploads/${up.id}`)).status).toBe(401);
  });

  it("answers 413 for a file over the limit and deletes the partial file", async () => {
    const u = await t.user();
    const before = await readdir(t.config.uploadDir);
    const res = await fetch(`${t.url}/api/uploads`, { method: "POST", headers: u.auth, body: form("x".repeat(5000), "text/plain") });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
    expect(await readdir(t.config.uploadDir)).toEqual(before);
    expect(await t.db.prisma.upload.count({ where: { userId: u.id } })).toBe(0);
  });

  it("answers 415 for a disallowed type or a non-multipart body, 400 without a file", async () => {
    const u = await t.user();
    const html = await fetch(`${t.url}/api/uploads`, { method: "POST", headers: u.auth, body: form("<script>", "text/html", "x.html") });
    expect(html.status).toBe(415);
    expect(((await html.json()) as { error: { code: string } }).error.code).toBe("unsupported_media_type");
    const jsonBody = await fetch(`${t.url}/api/uploads`, {
      method: "POST",
      headers: { ...u.auth, "content-type": "application/json" },
      body: "{}",
    });
    expect(jsonBody.status).toBe(415);
    const png = await fetch(`${t.url}/api/uploads`, { method: "POST", headers: u.auth, body: form("png", "image/png", "p.png") });
    expect(png.status).toBe(201);
    const empty = new FormData();
    empty.set("note", "no file");
    expect((await fetch(`${t.url}/api/uploads`, { method: "POST", headers: u.auth, body: empty })).status).toBe(400);
    const wrongField = await fetch(`${t.url}/api/uploads`, {
      method: "POST",
      headers: u.auth,
      body: form("x", "text/plain", "a.txt", "other"),
    });
    expect(wrongField.status).toBe(400);
  });

  it("applies the same limits to task message attachments", async () => {
    const u = await t.user();
    const task = (await (
      await fetch(`${t.url}/api/tasks`, {
        method: "POST",
        headers: { ...u.auth, "content-type": "application/json" },
        body: JSON.stringify({ title: "t" }),
      })
    ).json()) as { data: { id: string } };
    const before = await readdir(t.config.uploadDir);
    const f = form("y".repeat(4096), "text/plain", "big.txt", "files");
    f.set("text", "too big");
    const res = await fetch(`${t.url}/api/tasks/${task.data.id}/messages`, { method: "POST", headers: u.auth, body: f });
    expect(res.status).toBe(413);
    expect(await readdir(t.config.uploadDir)).toEqual(before);
    expect(await t.db.prisma.taskMessage.count({ where: { taskId: task.data.id } })).toBe(0);
  });
});
