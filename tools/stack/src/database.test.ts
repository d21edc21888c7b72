import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { EmbeddedPostgresHandle } from "@app/db/embedded";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseEnvFor, serviceDatabaseUrls } from "./database.js";
import { loadDevSecrets } from "./secrets.js";

let database: TestDatabase;
let dir: string;
beforeAll(async () => {
  database = await createTestDatabase();
  dir = await mkdtemp(path.join(os.tmpdir(), "stack-secrets-"));
});
afterAll(async () => {
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

async function whoAmI(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ u: string }>("SELECT current_user AS u")).rows[0]?.u ?? "";
  } finally {
    await client.end();
  }
}

describe("the stack's database URLs", () => {
  it("runs identity and API as auth_identity and auth_api on the embedded server, with passwords kept in secrets.json", async () => {
    // An older secrets.json (no database passwords) keeps its secrets and gains the passwords.
    await writeFile(path.join(dir, "secrets.json"), JSON.stringify({ authSecret: "a".repeat(43), dataEncryptionKey: "d".repeat(43) }));
    const secrets = await loadDevSecrets(dir);
    expect(secrets.authSecret).toBe("a".repeat(43));
    expect(secrets.databasePasswords.identity).toMatch(/^[\w-]{43}$/);
    expect(await loadDevSecrets(dir)).toEqual(secrets);
    expect(JSON.parse(await readFile(path.join(dir, "secrets.json"), "utf8"))).toEqual(secrets);
    expect((await stat(path.join(dir, "secrets.json"))).mode & 0o777).toBe(0o600);

    const embedded = {} as EmbeddedPostgresHandle; // only its presence matters here
    // Quotes and a backslash: ALTER ROLE takes the password as an escaped literal.
    const quoted = (p: string) => `${p}'"\\${randomBytes(4).toString("hex")}`;
    const passwords = { identity: quoted(secrets.databasePasswords.identity), api: quoted(secrets.databasePasswords.api) };
    const urls = await serviceDatabaseUrls({ url: database.url, embedded }, passwords);
    expect(await whoAmI(urls.identity)).toBe("auth_identity");
    expect(await whoAmI(urls.api)).toBe("auth_api");
    const envFor = databaseEnvFor(urls);
    expect(envFor("identity-2")).toEqual({ DATABASE_URL: urls.identity });
    expect(envFor("api-1")).toEqual({ DATABASE_URL: urls.api });
    expect(envFor("gateway")).toEqual({});
  });

  it("uses IDENTITY_DATABASE_URL / API_DATABASE_URL with a given server, else DATABASE_URL for both", async () => {
    const saved = { identity: process.env.IDENTITY_DATABASE_URL, api: process.env.API_DATABASE_URL };
    try {
      delete process.env.IDENTITY_DATABASE_URL;
      delete process.env.API_DATABASE_URL;
      const none = { identity: randomBytes(4).toString("hex"), api: "x" };
      expect(await serviceDatabaseUrls({ url: database.url, embedded: undefined }, none)).toEqual({
        identity: database.url,
        api: database.url,
      });
      process.env.IDENTITY_DATABASE_URL = database.identityUrl;
      process.env.API_DATABASE_URL = database.apiUrl;
      expect(await serviceDatabaseUrls({ url: database.url, embedded: undefined }, none)).toEqual({
        identity: database.identityUrl,
        api: database.apiUrl,
      });
    } finally {
      for (const [key, value] of [
        ["IDENTITY_DATABASE_URL", saved.identity],
        ["API_DATABASE_URL", saved.api],
      ] as const) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  });
});
