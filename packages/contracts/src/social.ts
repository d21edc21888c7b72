import { z } from "zod";
import type { SignInSocialResponse, SocialProviderInfo } from "./auth.js";

/** Answer of GET /api/auth/providers, as the client reads it (the web app's sign-in buttons). */
export const socialProvidersResponse: z.ZodType<SocialProviderInfo[]> = z.array(
  z.object({ id: z.string().min(1), name: z.string().min(1) }),
);

/** Answer of POST /api/auth/sign-in/social, as the client reads it: where the browser goes next. */
export const signInSocialResponse: z.ZodType<SignInSocialResponse> = z.object({ url: z.string().url(), redirect: z.boolean() });
