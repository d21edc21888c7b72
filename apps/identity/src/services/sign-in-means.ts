import type { Prisma } from "@app/db";

/**
 * Deletes every way into the account of `userId` besides its sessions and mailed links: the
 * password and provider links, passkeys, trusted devices and pending challenges, and with
 * `secondFactor` the second factor's row (the caller's own update of the user sets
 * `twoFactorEnabled: false` with it). Recovery (mailed-links.ts), a mailbox proven on someone
 * else's registration (passwordless/mailbox-proof.ts) and account deletion (account-settings.ts)
 * end the same things, in the caller's transaction.
 */
export async function endSignInMeans(tx: Prisma.TransactionClient, userId: string, options: { secondFactor: boolean }): Promise<void> {
  await tx.account.deleteMany({ where: { userId } });
  await tx.passkey.deleteMany({ where: { userId } });
  await tx.trustedDevice.deleteMany({ where: { userId } });
  await tx.authChallenge.deleteMany({ where: { userId } });
  if (options.secondFactor) await tx.twoFactor.deleteMany({ where: { userId } });
}
