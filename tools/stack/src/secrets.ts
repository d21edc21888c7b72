import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";

/** Development secrets kept between runs so restarts keep issued tokens valid. */
export interface DevSecrets {
  authSecret: string;
  dataEncryptionKey: string;
}

/**
 * Loads `<dataDir>/secrets.json`, creating it (mode 0600) with fresh random secrets on first
 * use. Only for local development: production passes AUTH_SECRET explicitly.
 */
export async function loadDevSecrets(dataDir: string): Promise<DevSecrets> {
  const file = path.join(dataDir, "secrets.json");
  if (existsSync(file)) {
    const parsed = JSON.parse(await readFile(file, "utf8")) as Partial<DevSecrets>;
    if (parsed.authSecret && parsed.dataEncryptionKey) return parsed as DevSecrets;
  }
  const secrets: DevSecrets = {
    authSecret: randomBytes(32).toString("base64url"),
    dataEncryptionKey: randomBytes(32).toString("base64url"),
  };
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  return secrets;
}
