import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError, type AppClient, createClient, memoryStorage } from "../src/index.js";
import { cookieFetch, freshEmail, signUpSignedIn, startStack } from "./helpers.js";

let env: Awaited<ReturnType<typeof startStack>>;
beforeAll(async () => {
  env = await startStack();
});
afterAll(async () => {
  await env?.stop();
});

async function signedUp(): Promise<AppClient> {
  const client = createClient({ baseUrl: env.stack.baseUrl, storage: memoryStorage(), fetch: cookieFetch().fetch });
  await signUpSignedIn(client, { email: freshEmail("products"), password: "correct horse battery", name: "Products" });
  return client;
}

async function caught(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(error)}`);
  return error;
}

describe("typed product resources against the real API", () => {
  it("projects: create, read, update, page through x-next-cursor, delete; another user gets 404", async () => {
    const client = await signedUp();
    const made = [];
    for (const name of ["one", "two", "three"]) made.push(await client.projects.create({ name, description: `about ${name}` }));
    expect(await client.projects.get(made[0]?.id ?? "")).toMatchObject({ name: "one", description: "about one" });
    expect(await client.projects.update(made[0]?.id ?? "", { description: null })).toMatchObject({ description: null });

    const first = await client.projects.list({ limit: 2 });
    expect(first.items.map((p) => p.name)).toEqual(["three", "two"]);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await client.projects.list({ limit: 2, cursor: first.nextCursor ?? "" });
    expect(second.items.map((p) => p.name)).toEqual(["one"]);
    expect(second.nextCursor).toBeNull();

    const stranger = await signedUp();
    expect(await caught(stranger.projects.get(made[0]?.id ?? ""))).toMatchObject({ status: 404, code: "not_found" });
    await client.projects.remove(made[0]?.id ?? "");
    expect(await caught(client.projects.get(made[0]?.id ?? ""))).toMatchObject({ status: 404 });
  });

  it("reports the server's per-field issues of a refused body", async () => {
    const client = await signedUp();
    const error = await caught(client.projects.create({ name: "   " }));
    expect(error).toMatchObject({ status: 400, code: "validation_failed" });
    expect(error.issues).toEqual([{ path: "name", message: "name is required" }]);
  });

  it("agents and chats with their messages", async () => {
    const client = await signedUp();
    const project = await client.projects.create({ name: "home" });
    const agent = await client.agents.create({ name: "helper", instructions: "be brief", projectId: project.id });
    expect(agent).toMatchObject({ name: "helper", projectId: project.id });
    expect((await client.agents.list()).items.map((a) => a.id)).toEqual([agent.id]);

    const chat = await client.chats.create({ title: "first chat", agentId: agent.id });
    await client.chats.addMessage(chat.id, { content: "hello" });
    await client.chats.addMessage(chat.id, { role: "assistant", content: "hi there" });
    const messages = await client.chats.messages(chat.id);
    expect(messages.items.map((m) => [m.role, m.content])).toEqual([
      ["user", "hello"],
      ["assistant", "hi there"],
    ]);
    expect(await client.chats.update(chat.id, { title: "renamed" })).toMatchObject({ title: "renamed" });
    await client.chats.remove(chat.id);
    await client.agents.remove(agent.id);
    expect((await client.chats.list()).items).toEqual([]);
  });

  it("MCP servers: create and list without secrets, delete", async () => {
    const client = await signedUp();
    const server = await client.mcpServers.create({ name: "docs", url: "https://mcp.example.com/mcp" });
    expect(server).toMatchObject({ name: "docs", url: "https://mcp.example.com/mcp", connected: false, oauth: null });
    expect((await client.mcpServers.list()).items.map((s) => s.id)).toEqual([server.id]);
    const bad = await caught(client.mcpServers.create({ name: "x", url: "ftp://nope" }));
    expect(bad.issues.map((i) => i.path)).toEqual(["url"]);
    // A server that cannot be reached: the route's own code comes through, not a status-based guess.
    const tools = await caught(client.mcpServers.tools(server.id));
    expect(tools.code).toMatch(/^mcp_/);
    expect(tools.status).toBeGreaterThanOrEqual(400);
    await client.mcpServers.remove(server.id);
    expect((await client.mcpServers.list()).items).toEqual([]);
  });
});
