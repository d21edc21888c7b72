import { randomBytes } from "node:crypto";
import { launchStack, type RunningStack } from "@app/stack";
import { signUp } from "./client.js";
import type { Watched } from "./soak.js";

/** A stack ready to be soaked: two identities and two APIs behind the gateway, with users. */
export interface SoakStack {
  stack: RunningStack;
  jwts: string[];
  /** The API and identity processes (their memory is sampled). */
  watch: Watched[];
}

/**
 * Launches two identity and two API processes behind the gateway on `databaseUrl` and signs up
 * `users` users through the gateway.
 */
export async function startSoakStack(options: {
  databaseUrl: string;
  users?: number;
  onLine?: (name: string, line: string) => void;
}): Promise<SoakStack> {
  const stack = await launchStack({
    databaseUrl: options.databaseUrl,
    port: 0,
    authSecret: randomBytes(32).toString("base64url"),
    dataEncryptionKey: randomBytes(32).toString("base64url"),
    identityInstances: 2,
    apiInstances: 2,
    env: { LOG_LEVEL: "warn", UPLOAD_DIR: `/tmp/soak-uploads-${randomBytes(6).toString("hex")}` },
    onLine: options.onLine ?? (() => undefined),
  });
  try {
    const jwts: string[] = [];
    for (let i = 0; i < (options.users ?? 4); i += 1) jwts.push((await signUp(stack.baseUrl, `Soak ${i}`)).jwt);
    const watch = stack.processes
      .filter((p) => p.name.startsWith("api") || p.name.startsWith("identity"))
      .map((p) => ({ name: p.name, pid: p.child.pid ?? -1 }));
    return { stack, jwts, watch };
  } catch (error) {
    await stack.stop();
    throw error;
  }
}
