import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { encodeCursor } from "../src/lib/pagination.js";
import { eventually, startTestApi, type TestApi } from "./helpers.js";

// Text PostgreSQL cannot take (a lone surrogate, NUL) inside a cursor or a WebSocket taskId is
// bad input: 400 / an error message, never a 500 or `internal_error`.
let t: TestApi;
let auth: { authorization: string };
let token: string;
let taskId: string;
let chatId: string;
beforeAll(async () => {
  t = await startTestApi({ logLevel: "error" });
  const admin = await t.user();
  await t.db.prisma.userRole.create({ data: { userId: admin.id, role: "admin" } });
  auth = admin.auth;
  token = admin.token;
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${t.url}${path}`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return ((await res.json()) as { data: { id: string } }).data.id;
  };
  taskId = await post("/api/tasks", { title: "t" });
  chatId = await post("/api/chats", { title: "c" });
});
afterAll(async () => {
  await t?.close();
});

const listRoutes = () => [
  "/api/tasks",
  "/api/projects",
  "/api/agents",
  "/api/chats",
  "/api/mcp-servers",
  `/api/tasks/${taskId}/messages`,
  `/api/chats/${chatId}/messages`,
  "/api/admin/users",
];

const BAD_IDS = { "a lone surrogate": "\ud800", "a lone low surrogate": "a\udc00b", NUL: "a\u0000b", "a control character": "\u001b[2J" };

describe("list cursors", () => {
  it("the eight list routes answer 200 to their own cursor", async () => {
    for (const path of listRoutes()) {
      const res = await fetch(`${t.url}${path}?cursor=${encodeCursor("0190a0b0-0000-7000-8000-000000000000")}`, { headers: auth });
      expect(res.status, path).toBe(200);
    }
  });

  it.each(Object.entries(BAD_IDS))("answer 400 to a cursor holding %s on all eight list routes", async (_label, id) => {
    const cursor = Buffer.from(JSON.stringify({ id }), "utf8").toString("base64url");
    for (const path of listRoutes()) {
      const res = await fetch(`${t.url}${path}?cursor=${cursor}`, { headers: auth });
      expect(res.status, path).toBe(400);
      const body = (await res.json()) as { ok: boolean; error: { code: string; issues?: Array<{ path: string }> } };
      expect(body.ok).toBe(false);
      expect(body.error.code).toBe("validation_failed");
      expect(body.error.issues?.[0]?.path).toBe("cursor");
    }
  });
});

describe("WebSocket taskId", () => {
  it.each(Object.entries(BAD_IDS))(
    "answers a subscribe with %s in taskId with bad_request, and the socket stays usable",
    async (_label, id) => {
      const ws = new WebSocket(`${t.url.replace("http", "ws")}/api/ws?token=${token}`);
      const messages: Array<{ type: string; code?: string; message?: string; taskId?: string }> = [];
      ws.on("message", (data) => messages.push(JSON.parse(String(data))));
      await once(ws, "open");
      ws.send(JSON.stringify({ type: "subscribe", taskId: id }));
      ws.send(JSON.stringify({ type: "unsubscribe", taskId: id }));
      ws.send(JSON.stringify({ type: "subscribe", taskId }));
      await eventually(() => messages.find((m) => m.type === "subscribed"));
      const errors = messages.filter((m) => m.type === "error");
      expect(errors).toEqual([
        { type: "error", code: "bad_request", message: "taskId is not a valid task id" },
        { type: "error", code: "bad_request", message: "taskId is not a valid task id" },
      ]);
      ws.close();
    },
  );
});
