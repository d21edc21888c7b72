import { readdir } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApi, type TestApi } from "./helpers.js";

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi();
});
afterAll(async () => {
  await t?.close();
});

type Auth = { authorization: string };
interface Upload {
  id: string;
  filename: string;
}

async function upload(auth: Auth, name: string): Promise<Upload> {
  const form = new FormData();
  form.append("file", new Blob([`bytes of ${name}`], { type: "text/plain" }), name);
  const res = await fetch(`${t.url}/api/uploads`, { method: "POST", headers: auth, body: form });
  expect(res.status).toBe(201);
  return (await res.json()) as Upload;
}

async function listPage(auth: Auth, query = ""): Promise<{ status: number; items: Upload[]; next: string | null }> {
  const res = await fetch(`${t.url}/api/uploads${query}`, { headers: auth });
  const body = (await res.json()) as { data?: Upload[] };
  return { status: res.status, items: body.data ?? [], next: res.headers.get("x-next-cursor") };
}

describe("GET /api/uploads and DELETE /api/uploads/:id", () => {
  it("lists the caller's own uploads newest first, page by page through x-next-cursor", async () => {
    const ann = await t.user();
    const bob = await t.user();
    const mine: string[] = [];
    for (let i = 1; i <= 25; i += 1) mine.push((await upload(ann.auth, `file-${String(i).padStart(2, "0")}.txt`)).id);
    await upload(bob.auth, "bobs.txt");

    const first = await listPage(ann.auth);
    expect(first.status).toBe(200);
    expect(first.items).toHaveLength(20);
    expect(first.items[0]?.filename).toBe("file-25.txt");
    expect(first.next).toEqual(expect.any(String));
    const second = await listPage(ann.auth, `?cursor=${first.next}`);
    expect(second.items.map((u) => u.filename)).toEqual(["file-05.txt", "file-04.txt", "file-03.txt", "file-02.txt", "file-01.txt"]);
    expect(second.next).toBeNull();
    expect([...first.items, ...second.items].map((u) => u.id)).toEqual([...mine].reverse());

    expect((await listPage(bob.auth)).items.map((u) => u.filename)).toEqual(["bobs.txt"]);
    expect((await listPage(ann.auth, "?cursor=not-a-cursor")).status).toBe(400);
    expect((await fetch(`${t.url}/api/uploads`)).status).toBe(401);
  });

  it("leaves task message attachments out of the list (they are listed with their message)", async () => {
    const u = await t.user();
    const task = (await (
      await fetch(`${t.url}/api/tasks`, {
        method: "POST",
        headers: { ...u.auth, "content-type": "application/json" },
        body: JSON.stringify({ title: "with an attachment" }),
      })
    ).json()) as { data: { id: string } };
    const form = new FormData();
    form.set("text", "see the file");
    form.append("files", new Blob(["attached"], { type: "text/plain" }), "attached.txt");
    const message = await fetch(`${t.url}/api/tasks/${task.data.id}/messages`, { method: "POST", headers: u.auth, body: form });
    expect(message.status).toBe(201);
    const attachment = ((await message.json()) as { attachments: Upload[] }).attachments[0];
    await upload(u.auth, "standalone.txt");
    expect((await listPage(u.auth)).items.map((x) => x.filename)).toEqual(["standalone.txt"]);
    // The attachment stays with its message: deleting it from here is refused like any unknown id.
    const refused = await fetch(`${t.url}/api/uploads/${attachment?.id}`, { method: "DELETE", headers: u.auth });
    expect(refused.status).toBe(404);
    expect((await fetch(`${t.url}/api/uploads/${attachment?.id}`, { headers: u.auth })).status).toBe(200);
  });

  it("deletes the caller's upload with its bytes; another user's id answers 404 and keeps both", async () => {
    const ann = await t.user();
    const eve = await t.user();
    const kept = await upload(ann.auth, "kept.txt");
    const gone = await upload(ann.auth, "gone.txt");
    expect(await readdir(t.config.uploadDir)).toEqual(expect.arrayContaining([kept.id, gone.id]));

    const stolen = await fetch(`${t.url}/api/uploads/${kept.id}`, { method: "DELETE", headers: eve.auth });
    expect(stolen.status).toBe(404);
    expect(((await stolen.json()) as { error: { code: string } }).error.code).toBe("not_found");
    expect(await readdir(t.config.uploadDir)).toContain(kept.id);

    const res = await fetch(`${t.url}/api/uploads/${gone.id}`, { method: "DELETE", headers: ann.auth });
    expect(res.status).toBe(204);
    expect(await readdir(t.config.uploadDir)).not.toContain(gone.id);
    expect(await t.db.prisma.upload.count({ where: { id: gone.id } })).toBe(0);
    expect((await fetch(`${t.url}/api/uploads/${gone.id}`, { headers: ann.auth })).status).toBe(404);
    expect((await listPage(ann.auth)).items.map((u) => u.filename)).toEqual(["kept.txt"]);

    const again = await fetch(`${t.url}/api/uploads/${gone.id}`, { method: "DELETE", headers: ann.auth });
    expect(again.status).toBe(404);
    expect((await fetch(`${t.url}/api/uploads/no-such-id`, { method: "DELETE", headers: ann.auth })).status).toBe(404);
    expect((await fetch(`${t.url}/api/uploads/${kept.id}`, { method: "DELETE" })).status).toBe(401);
  });
});
