import { z } from "zod";

/**
 * Body of GET /api/me: who the bearer token says the caller is. Built from the token's claims
 * only (no database read): `id` is the trusted `sub`; `email` and `name` are a snapshot taken when
 * the token was issued and may be stale until the user signs in again.
 */
export const meSchema = z.object({
  id: z.string(),
  email: z.string().nullable(),
  name: z.string().nullable(),
});
export type Me = z.infer<typeof meSchema>;
