import { z } from "zod";

/**
 * The outbox of account deletions, the one table both services touch (prisma/schema.prisma, model
 * UserDeletion): identity inserts a row in the transaction that deletes the account and NOTIFYs
 * {@link USER_DELETED_CHANNEL} (account.ts); the API works pending rows off and sets `api_done_at`;
 * identity then deletes the user row and sets `completed_at` (docs/accounts.md).
 */
export const USER_DELETION_TABLE = "user_deletion";

/** A row of {@link USER_DELETION_TABLE}, under its column names, as a raw query returns it. */
export const userDeletionRowSchema = z.object({
  user_id: z.string(),
  requested_at: z.date(),
  /** Set by the API once the user's rows and files are gone. */
  api_done_at: z.date().nullable(),
  /** Set by identity once the user row is deleted. */
  completed_at: z.date().nullable(),
});
export type UserDeletionRow = z.infer<typeof userDeletionRowSchema>;
