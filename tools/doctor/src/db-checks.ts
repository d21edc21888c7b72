import { SecretBox } from "@app/secret-box";
import pg from "pg";
import { type CheckResult, GROUPS, result } from "./checks.js";

const { restart } = GROUPS;

/** Purpose under which identity seals the private keys (apps/identity/src/services/key-set.ts). */
export const JWKS_SEAL_PURPOSE = "jwks-private-key";

/** A live row of the jwks table. */
interface KeyRow {
  id: string;
  private_key: string;
}

/** Reads the live (not retired) jwks rows, or the reason it could not. */
async function readKeys(databaseUrl: string): Promise<{ rows: KeyRow[] } | { error: string }> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    const { rows } = await client.query<KeyRow>("SELECT id, private_key FROM jwks WHERE retired_at IS NULL ORDER BY created_at DESC");
    return { rows };
  } catch (error) {
    return { error: (error as Error).message };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The database checks of the restart list: AUTH_SECRET changed (does the secret open any live
 * key, as identity opens them: SecretBox with the row id as additional data) and the jwks table
 * is empty. Both are skipped without DATABASE_URL; the first also without AUTH_SECRET.
 */
export async function databaseChecks(databaseUrl: string | undefined, authSecret: string | undefined): Promise<CheckResult[]> {
  const secretTitle = "AUTH_SECRET decrypts at least one signing key";
  const countTitle = "the jwks table holds at least one key";
  if (!databaseUrl) {
    const why = "DATABASE_URL is not set (the database checks need the identity's database)";
    return [result.skip("auth-secret", restart, secretTitle, why), result.skip("jwks-count", restart, countTitle, why)];
  }
  const read = await readKeys(databaseUrl);
  if ("error" in read) {
    const fix = "set DATABASE_URL to the identity's database and make it reachable";
    return [
      result.fail("auth-secret", restart, secretTitle, `cannot read jwks: ${read.error}`, fix),
      result.fail("jwks-count", restart, countTitle, `cannot read jwks: ${read.error}`, fix),
    ];
  }
  const { rows } = read;
  const count =
    rows.length >= 1
      ? result.pass("jwks-count", restart, countTitle, `${rows.length} live key(s)`)
      : result.fail(
          "jwks-count",
          restart,
          countTitle,
          "no live row in jwks",
          "apply the migrations to this database and call get-session once (identity creates the first key)",
        );
  let secret: CheckResult;
  if (!authSecret) secret = result.skip("auth-secret", restart, secretTitle, "AUTH_SECRET is not set here");
  else if (!rows.length) secret = result.fail("auth-secret", restart, secretTitle, "no live key to decrypt", "see the jwks check below");
  else {
    const box = new SecretBox(authSecret, JWKS_SEAL_PURPOSE);
    const opened = rows.filter((row) => box.open(row.private_key, row.id) !== undefined).length;
    secret = opened
      ? result.pass("auth-secret", restart, secretTitle, `${opened} of ${rows.length}`)
      : result.fail(
          "auth-secret",
          restart,
          secretTitle,
          `none of ${rows.length} live key(s) opens with this AUTH_SECRET`,
          "give identity (and this command) the AUTH_SECRET the keys were sealed with; a new secret invalidates every issued JWT: users sign in again",
        );
  }
  return [secret, count];
}
