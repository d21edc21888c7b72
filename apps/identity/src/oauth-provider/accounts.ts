import type { PrismaClient } from "@app/db";
import type { Account } from "oidc-provider";

/**
 * The claims each scope releases (ID token and userinfo). `sub` is the user id; the MCP scopes
 * release none (they are the API's, carried by the access token's `scope`).
 */
export const SCOPE_CLAIMS = {
  openid: ["sub"],
  email: ["email", "email_verified"],
  profile: ["name", "picture", "updated_at"],
} as const;

/**
 * oidc-provider's `findAccount`: the product's user by id, or nothing for a user that does not
 * exist or is banned (apps/identity/src/admin/), so their codes and refresh tokens stop working
 * ("referenced account not found") and a new authorization asks them to sign in, which they cannot.
 */
export function accountFinder(prisma: PrismaClient, now: () => number) {
  return async (_ctx: unknown, id: string): Promise<Account | undefined> => {
    const user = await prisma.user.findUnique({
      where: { id },
      select: { id: true, email: true, emailVerified: true, name: true, image: true, updatedAt: true, banned: true, banExpires: true },
    });
    if (!user) return undefined;
    if (user.banned && (user.banExpires === null || user.banExpires.getTime() > now())) return undefined;
    return {
      accountId: user.id,
      claims: () => ({
        sub: user.id,
        email: user.email,
        email_verified: user.emailVerified,
        name: user.name,
        ...(user.image ? { picture: user.image } : {}),
        updated_at: Math.floor(user.updatedAt.getTime() / 1000),
      }),
    };
  };
}
