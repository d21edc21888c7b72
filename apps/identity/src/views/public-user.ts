import type { PublicUser } from "@app/contracts";
import type { User } from "@app/db";

// A leaf: services (webhook payloads, services/account-events.ts) show a user as the routes do
// without importing the routes' views, which import services.

/**
 * The public JSON view of a user, with better-auth's `twoFactorEnabled` (false for a user shape
 * without it: sign-up's answer for a taken address, services/verified-sign-up.ts, is a new user's).
 */
export function publicUser(
  user: Pick<User, "id" | "email" | "name" | "emailVerified" | "image" | "createdAt" | "updatedAt"> & { twoFactorEnabled?: boolean },
): PublicUser {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    emailVerified: user.emailVerified,
    image: user.image,
    twoFactorEnabled: user.twoFactorEnabled ?? false,
    createdAt: user.createdAt.toISOString(),
    updatedAt: user.updatedAt.toISOString(),
  };
}
