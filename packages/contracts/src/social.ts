import { z } from "zod";
import type { SignInSocialResponse, SocialProviderInfo, unlinkAccountBody } from "./auth.js";

/** Answer of GET /api/auth/providers, as the client reads it (the web app's sign-in buttons). */
export const socialProvidersResponse: z.ZodType<SocialProviderInfo[]> = z.array(
  z.object({ id: z.string().min(1), name: z.string().min(1) }),
);

/** Answer of POST /api/auth/sign-in/social, as the client reads it: where the browser goes next. */
export const signInSocialResponse: z.ZodType<SignInSocialResponse> = z.object({ url: z.string().url(), redirect: z.boolean() });

/**
 * One way the signed-in user signs in, as GET /api/auth/list-accounts answers (better-auth's
 * `listAccounts`): `providerId` is `credential` for the password, else a provider id; `id` is
 * what POST /api/auth/unlink-account takes as `accountId`.
 */
export interface LinkedAccount {
  id: string;
  providerId: string;
  accountId: string;
  userId: string;
  scopes: string[];
  createdAt: string;
  updatedAt: string;
}

/** Answer of GET /api/auth/list-accounts, as the client reads it (the account page's sign-in methods). */
export const linkedAccountsResponse: z.ZodType<LinkedAccount[]> = z.array(
  z.object({
    id: z.string().min(1),
    providerId: z.string().min(1),
    accountId: z.string(),
    userId: z.string(),
    scopes: z.array(z.string()),
    createdAt: z.string(),
    updatedAt: z.string(),
  }),
);

/** Body of POST /api/auth/unlink-account: `{accountId}` (a {@link LinkedAccount}'s id) or `{providerId, accountId?}`. */
export type UnlinkAccountBody = z.infer<typeof unlinkAccountBody>;
