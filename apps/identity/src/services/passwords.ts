import { type Algorithm, hash, verify } from "@node-rs/argon2";
import { passwordQueue } from "./password-queue.js";

/** `Algorithm.Argon2id` (an ambient const enum, so spelled out). */
const ARGON2ID = 2 as Algorithm;

/** OWASP's recommended argon2id cost: 19 MiB memory, 2 iterations, 1 lane. */
export const PASSWORD_HASH_PARAMS = {
  algorithm: ARGON2ID,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const;

/** Hashes a password with argon2id (PHC string, salt included), in turn (services/password-queue.ts). */
export function hashPassword(password: string): Promise<string> {
  return passwordQueue.run(() => hash(password, PASSWORD_HASH_PARAMS));
}

let dummyHash: Promise<string> | undefined;

/** The dummy hash, computed once; a refused attempt (queue full) is tried again next time. */
function dummy(): Promise<string> {
  dummyHash ??= hashPassword("dummy-password-for-timing").catch((error: unknown) => {
    dummyHash = undefined;
    throw error;
  });
  return dummyHash;
}

/** Computes the dummy hash ahead of the first unknown-email sign-in, so that one is not slower. */
export function warmUpPasswords(): Promise<unknown> {
  return dummy().catch(() => undefined);
}

/**
 * Verifies a password against a stored hash, in turn (services/password-queue.ts). With no stored
 * hash (unknown email) it still verifies against a fixed dummy hash of the same cost, so both
 * failures take the same time.
 */
export async function verifyPassword(stored: string | null | undefined, password: string): Promise<boolean> {
  if (!stored) {
    const fixed = await dummy();
    await passwordQueue.run(() => verify(fixed, password).catch(() => false));
    return false;
  }
  return passwordQueue.run(async () => {
    try {
      return await verify(stored, password);
    } catch {
      return false;
    }
  });
}
