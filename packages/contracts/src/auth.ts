import { z } from "zod";

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * True for text that can be stored and compared faithfully: no NUL character (PostgreSQL text
 * cannot hold it) and no lone UTF-16 surrogate (it would silently become U+FFFD).
 */
export function isCleanText(value: string): boolean {
  return !value.includes("\u0000") && !LONE_SURROGATE.test(value);
}

/** A string schema that refuses NUL characters and lone surrogates with a 400 naming the field. */
export function cleanString(field: string) {
  return z.string({ error: `${field} is required` }).refine(isCleanText, `${field} contains characters that are not allowed`);
}

/** Longest password accepted; longer ones are refused before any hashing work. */
export const PASSWORD_MAX_LENGTH = 128;
/** Shortest password accepted. */
export const PASSWORD_MIN_LENGTH = 8;

/**
 * An email address, trimmed, Unicode-normalised (NFC) and lower-cased, so case and composition
 * variants of one address name one account.
 */
export const emailSchema = cleanString("email")
  .trim()
  .max(254, "email is too long")
  .transform((s) => s.normalize("NFC").toLowerCase())
  .pipe(z.email({ pattern: z.regexes.unicodeEmail, error: "email is not a valid address" }));

/** A password within the accepted length. */
export const passwordSchema = cleanString("password")
  .min(PASSWORD_MIN_LENGTH, `password must be at least ${PASSWORD_MIN_LENGTH} characters`)
  .max(PASSWORD_MAX_LENGTH, `password must be at most ${PASSWORD_MAX_LENGTH} characters`);

/** Body of POST /api/auth/sign-up/email. */
export const signUpBody = z.strictObject({
  email: emailSchema,
  password: passwordSchema,
  name: cleanString("name").trim().min(1, "name is required").max(200, "name is too long"),
});
export type SignUpBody = z.infer<typeof signUpBody>;

/** Body of POST /api/auth/sign-in/email. */
export const signInBody = z.strictObject({
  email: emailSchema,
  password: cleanString("password")
    .min(1, "password is required")
    .max(PASSWORD_MAX_LENGTH * 4, "password is too long"),
});
export type SignInBody = z.infer<typeof signInBody>;

/** The public view of a user. */
export const userSchema = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  emailVerified: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type PublicUser = z.infer<typeof userSchema>;

/** The public view of a session (never its secret). */
export const sessionSchema = z.object({
  id: z.string(),
  userId: z.string(),
  expiresAt: z.string(),
  createdAt: z.string(),
});
export type PublicSession = z.infer<typeof sessionSchema>;

/** Body of sign-up, sign-in and get-session responses. */
export const sessionResponse = z.object({ session: sessionSchema, user: userSchema });
export type SessionResponse = z.infer<typeof sessionResponse>;

/** One public key of GET /api/auth/jwks. */
export const publicJwkSchema = z.looseObject({
  kty: z.string(),
  crv: z.string().optional(),
  x: z.string().optional(),
  kid: z.string(),
  alg: z.string(),
  use: z.literal("sig"),
});

/** Body of GET /api/auth/jwks. */
export const jwksResponse = z.object({ keys: z.array(publicJwkSchema) });
export type JwksResponse = z.infer<typeof jwksResponse>;

/** Claims the identity puts in every JWT. `name` and `email` are an issuance-time snapshot. */
export const jwtClaimsSchema = z.object({
  sub: z.string(),
  iat: z.number(),
  exp: z.number(),
  iss: z.string(),
  aud: z.union([z.string(), z.array(z.string())]),
  jti: z.string().optional(),
  name: z.string().optional(),
  email: z.string().optional(),
});
export type JwtClaims = z.infer<typeof jwtClaimsSchema>;
