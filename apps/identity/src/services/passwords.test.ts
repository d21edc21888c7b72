import { describe, expect, it, vi } from "vitest";

const calls: string[] = [];
vi.mock("@node-rs/argon2", async (importOriginal) => {
  const real = await importOriginal<typeof import("@node-rs/argon2")>();
  return {
    ...real,
    verify: (hash: string, password: string) => {
      calls.push(hash);
      return real.verify(hash, password);
    },
  };
});

const { PASSWORD_HASH_PARAMS, hashPassword, verifyPassword } = await import("./passwords.js");

describe("passwords", () => {
  it("hashes with argon2id at OWASP cost (19 MiB, t=2, p=1)", async () => {
    const hash = await hashPassword("correct horse");
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(PASSWORD_HASH_PARAMS).toMatchObject({ memoryCost: 19456, timeCost: 2, parallelism: 1 });
    expect(await verifyPassword(hash, "correct horse")).toBe(true);
    expect(await verifyPassword(hash, "wrong horse")).toBe(false);
  });

  it("does the same argon2 work for an unknown account as for a wrong password", async () => {
    calls.length = 0;
    expect(await verifyPassword(undefined, "anything")).toBe(false);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });
});
