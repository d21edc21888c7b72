import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";

/** Development secrets kept between runs so restarts keep issued tokens valid. */
export interface DevSecrets {
  authSecret: string;
  dataEncryptionKey: string;
  /** Passwords of the embedded database's service roles auth_identity and auth_api (docs/database-roles.md). */
  databasePasswords: { identity: string; api: string };
}

const fresh = () => randomBytes(32).toString("base64url");

/**
 * Loads `<dataDir>/secrets.json`, creating it (mode 0600) with fresh random secrets on first
 * use and adding any secret a file from an older run lacks. Only for local development:
 * production passes AUTH_SECRET and its database URLs explicitly.
 */
export async function loadDevSecrets(dataDir: string): Promise<DevSecrets> {
  const file = path.join(dataDir, "secrets.json");
  const parsed = existsSync(file) ? (JSON.parse(await readFile(file, "utf8")) as Partial<DevSecrets>) : {};
  const passwords = parsed.databasePasswords;
  const secrets: DevSecrets = {
    ...parsed,
    authSecret: parsed.authSecret || fresh(),
    dataEncryptionKey: parsed.dataEncryptionKey || fresh(),
    databasePasswords: { identity: passwords?.identity || fresh(), api: passwords?.api || fresh() },
  };
  if (JSON.stringify(secrets) !== JSON.stringify(parsed)) {
    await mkdir(dataDir, { recursive: true });
    await writeFile(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
    await chmod(file, 0o600); // `mode` applies only when the file is created
  }
  return secrets;
}
