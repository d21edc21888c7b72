import { AUTH_TOKEN_STORAGE_KEY } from "@app/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError, type AppClient, createClient, memoryStorage, type TokenStorage } from "../src/index.js";
import { cookieFetch, freshEmail, grantRole, signInSignedIn, signUpSignedIn, startStack } from "./helpers.js";

let env: Awaited<ReturnType<typeof startStack>>;
beforeAll(async () => {
  env = await startStack();
});
afterAll(async () => {
  await env?.stop();
});

const PASSWORD = "correct horse battery";

/** A simulated browser: its own cookie jar and storage. */
function browser(): { client: AppClient; storage: TokenStorage; jar: ReturnType<typeof cookieFetch> } {
  const jar = cookieFetch();
  const storage = memoryStorage();
  return { client: createClient({ baseUrl: env.stack.baseUrl, storage, fetch: jar.fetch }), storage, jar };
}

async function signedUp() {
  const b = browser();
  const email = freshEmail();
  const session = await signUpSignedIn(b.client, { email, password: PASSWORD, name: "Client Test" });
  return { ...b, email, session };
}

describe("two-step login", () => {
  it("sign-up awaits get-session and stores the JWT under authToken", async () => {
    const { storage, jar, session, client } = await signedUp();
    expect(jar.calls.get("/api/auth/get-session")).toBe(1);
    expect(storage.getItem(AUTH_TOKEN_STORAGE_KEY)).toBe(session.token);
    expect(session.token.split(".")).toHaveLength(3);
    expect((await client.me()).id).toBe(session.user.id);
  });

  it("sign-in posts credentials, then awaits get-session before resolving", async () => {
    const { email } = await signedUp();
    const b = browser();
    expect(b.client.auth.token()).toBeNull();
    const signedIn = await signInSignedIn(b.client, { email, password: PASSWORD });
    expect(b.jar.calls.get("/api/auth/sign-in/email")).toBe(1);
    expect(b.jar.calls.get("/api/auth/get-session")).toBe(1);
    expect(b.storage.getItem(AUTH_TOKEN_STORAGE_KEY)).toBe(signedIn.token);
    const task = await b.client.tasks.create({ title: "after sign-in" });
    expect((await b.client.tasks.list()).items.map((t) => t.id)).toContain(task.id);
  });

  it("turns error envelopes into typed errors", async () => {
    const b = browser();
    const wrong = await b.client.auth.signIn({ email: freshEmail(), password: "not the password" }).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(ApiError);
    expect(wrong).toMatchObject({ status: 401, code: "invalid_credentials" });
    expect(b.client.auth.token()).toBeNull();

    const { client } = await signedUp();
    const invalid = await client.tasks.create({ title: "" }).catch((e: unknown) => e);
    expect(invalid).toMatchObject({ status: 400, code: "validation_failed" });
    expect((invalid as ApiError).issues.map((i) => i.path)).toContain("title");
    await expect(client.tasks.get("no-such-task")).rejects.toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("401 handling", () => {
  it("with no token stored, a business call asks get-session once and recovers while the cookie is valid", async () => {
    const { client, storage, jar } = await signedUp();
    storage.removeItem(AUTH_TOKEN_STORAGE_KEY);
    const before = jar.calls.get("/api/auth/get-session") ?? 0;
    const page = await client.tasks.list();
    expect(page.items).toEqual([]);
    expect(jar.calls.get("/api/auth/get-session")).toBe(before + 1);
    expect(storage.getItem(AUTH_TOKEN_STORAGE_KEY)).toMatch(/^ey/);
  });

  it("replaces a bad token with a fresh one, sharing one get-session between concurrent calls", async () => {
    const { client, storage, jar } = await signedUp();
    storage.setItem(AUTH_TOKEN_STORAGE_KEY, "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2ln");
    const before = jar.calls.get("/api/auth/get-session") ?? 0;
    await Promise.all([client.tasks.list(), client.me(), client.tasks.list()]);
    expect(jar.calls.get("/api/auth/get-session")).toBe(before + 1);
    expect(storage.getItem(AUTH_TOKEN_STORAGE_KEY)).not.toContain("c2ln");
  });

  it("after sign-out the 401 stands and the stored token is removed", async () => {
    const { client, storage } = await signedUp();
    const token = client.auth.token();
    await client.auth.signOut();
    expect(storage.getItem(AUTH_TOKEN_STORAGE_KEY)).toBeNull();
    await expect(client.tasks.list()).rejects.toMatchObject({ status: 401, code: "missing_token" });
    // A foreign token is dropped too once get-session confirms there is no session.
    storage.setItem(AUTH_TOKEN_STORAGE_KEY, `${token ?? ""}x`);
    await expect(client.tasks.list()).rejects.toMatchObject({ status: 401 });
    expect(storage.getItem(AUTH_TOKEN_STORAGE_KEY)).toBeNull();
  });

  it("tells listeners when the token changes", async () => {
    const { client } = await signedUp();
    const seen: (string | null)[] = [];
    client.auth.onTokenChange((t) => seen.push(t));
    await client.auth.signOut();
    expect(seen).toEqual([null]);
  });
});

describe("business calls", () => {
  it("pages through lists with the next cursor", async () => {
    const { client } = await signedUp();
    for (const title of ["a", "b", "c"]) await client.tasks.create({ title });
    const first = await client.tasks.list({ limit: 2 });
    expect(first.items).toHaveLength(2);
    expect(first.nextCursor).toBeTruthy();
    const second = await client.tasks.list({ limit: 2, cursor: first.nextCursor ?? "" });
    expect(second.items).toHaveLength(1);
    expect(second.nextCursor).toBeNull();
  });

  it("uploads a file as multipart and downloads its bytes", async () => {
    const { client } = await signedUp();
    const upload = await client.uploads.create({ blob: new Blob(["hello upload"], { type: "text/plain" }), filename: "hello.txt" });
    expect(upload).toMatchObject({ filename: "hello.txt", contentType: "text/plain", size: 12 });
    expect(await (await client.uploads.download(upload.id)).text()).toBe("hello upload");
    await expect(
      client.uploads.create({ blob: new Blob(["x"], { type: "application/x-msdownload" }), filename: "a.exe" }),
    ).rejects.toMatchObject({ status: 415, code: "unsupported_media_type" });
  });

  it("adds a task message with attachments as multipart", async () => {
    const { client } = await signedUp();
    const task = await client.tasks.create({ title: "with files" });
    const message = await client.tasks.addMessage(task.id, "see attached", [
      { blob: new Blob(["a,b\n1,2\n"], { type: "text/csv" }), filename: "t.csv" },
    ]);
    expect(message.text).toBe("see attached");
    expect(message.attachments.map((a) => a.filename)).toEqual(["t.csv"]);
    expect((await client.tasks.messages(task.id)).items.map((m) => m.id)).toEqual([message.id]);
  });

  it("streams a text generation", async () => {
    const { client } = await signedUp();
    const events = [];
    for await (const event of client.generate({ prompt: "three little words" })) events.push(event);
    const text = events.map((e) => (e.type === "delta" ? e.text : "")).join("");
    expect(text).toBe("Local echo: three little words");
    expect(events.at(-1)).toEqual({ type: "done", provider: "local", finishReason: "stop" });
  });

  it("admin routes: 403 for a plain user, users and roles for an admin", async () => {
    const { client, session } = await signedUp();
    await expect(client.admin.users()).rejects.toMatchObject({ status: 403, code: "forbidden" });
    await grantRole(env.database.url, session.user.id, "admin");
    const users = await client.admin.users({ limit: 100 });
    expect(users.items.find((u) => u.id === session.user.id)?.roles).toEqual(["admin"]);
  });
});
