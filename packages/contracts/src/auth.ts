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

/** Characters that render as nothing: format controls (zero-width, bidi), default-ignorables, controls. */
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}\p{Cc}]/u;
/**
 * Scripts whose letters are told apart in a local part; letters of Han, Hiragana, Katakana and
 * Hangul form one group (Japanese and Korean addresses mix them). A letter of a script not listed
 * is its own group, so it cannot mix with a listed one either.
 */
const SCRIPT_GROUPS: [string, RegExp][] = [
  ["Latin", /\p{Script=Latin}/u],
  ["Cyrillic", /\p{Script=Cyrillic}/u],
  ["Greek", /\p{Script=Greek}/u],
  ["Armenian", /\p{Script=Armenian}/u],
  ["Georgian", /\p{Script=Georgian}/u],
  ["Hebrew", /\p{Script=Hebrew}/u],
  ["Arabic", /\p{Script=Arabic}/u],
  ["Cherokee", /\p{Script=Cherokee}/u],
  ["CJK", /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Bopomofo}]/u],
];

/** The script groups of the letters in `text` (digits, punctuation and combining marks have none). */
function scriptsOf(text: string): Set<string> {
  const scripts = new Set<string>();
  for (const char of text) {
    if (!/\p{L}/u.test(char)) continue;
    scripts.add(SCRIPT_GROUPS.find(([, re]) => re.test(char))?.[0] ?? `other:${char}`);
  }
  return scripts;
}

/**
 * WHATWG URL, a global in every runtime the contracts run in (Node, browsers); reached through
 * `globalThis` because this package's build declares no environment types (only zod is imported).
 */
const WhatwgUrl = (globalThis as unknown as { URL: new (input: string) => { hostname: string } }).URL;

/**
 * The domain in IDNA ASCII form (WHATWG URL host parsing, as node's `url.domainToASCII`), or
 * undefined. One trailing dot is dropped: `example.com.` is the fully qualified spelling of
 * `example.com` (DNS delivers both to one mailbox), so both must name one account; an empty
 * label (`example..com`, a second trailing dot) is not a host name.
 */
function domainToAscii(domain: string): string | undefined {
  if (!domain || /[\s/\\?#@:%[\]]/u.test(domain)) return undefined;
  try {
    const host = new WhatwgUrl(`http://${domain}`).hostname.replace(/\.$/, "");
    return host.split(".").every((label) => label.length > 0) ? host : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Normalises an address so look-alikes name one account or are refused: NFKC (full-width and
 * compatibility letters fold to their plain form) and lower case, the domain converted to IDNA
 * ASCII; invisible characters and local parts mixing scripts (a Cyrillic "а" among Latin letters)
 * are refused.
 */
function normaliseEmail(raw: string, ctx: z.RefinementCtx): string {
  if (INVISIBLE.test(raw)) {
    ctx.addIssue({ code: "custom", message: "email contains invisible characters" });
    return z.NEVER;
  }
  const folded = raw.normalize("NFKC").toLowerCase();
  const at = folded.lastIndexOf("@");
  const local = folded.slice(0, at);
  if (at < 1 || INVISIBLE.test(folded)) return folded; // the email check below refuses it
  if (scriptsOf(local).size > 1) {
    ctx.addIssue({ code: "custom", message: "email mixes letters of different scripts (for example Latin and Cyrillic)" });
    return z.NEVER;
  }
  const domain = domainToAscii(folded.slice(at + 1));
  if (!domain) {
    ctx.addIssue({ code: "custom", message: "email domain is not valid" });
    return z.NEVER;
  }
  return `${local}@${domain}`;
}

/**
 * An email address, trimmed and normalised ({@link normaliseEmail}), so case, composition,
 * width and IDNA variants of one address name one account.
 */
export const emailSchema = cleanString("email")
  .trim()
  .max(254, "email is too long")
  .transform(normaliseEmail)
  .pipe(z.email({ pattern: z.regexes.unicodeEmail, error: "email is not a valid address" }).max(254, "email is too long"));

/** A password within the accepted length. */
export const passwordSchema = cleanString("password")
  .min(PASSWORD_MIN_LENGTH, `password must be at least ${PASSWORD_MIN_LENGTH} characters`)
  .max(PASSWORD_MAX_LENGTH, `password must be at most ${PASSWORD_MAX_LENGTH} characters`);

/**
 * Control characters and the bidi controls (embeddings, overrides, isolates, marks): in a name
 * they make the text render other than it is stored ("Bob\u202Enimda" shows as "Bobadmin"), so a
 * name holding one is refused after trimming.
 */
const NAME_CONTROLS = /[\p{Cc}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;

/** A user's display name. */
export const nameSchema = cleanString("name")
  .trim()
  .min(1, "name is required")
  .max(200, "name is too long")
  .refine((value) => !NAME_CONTROLS.test(value), "name contains control characters");

/** A profile image: an http(s) URL or a data: URL of a small image. */
export const imageSchema = cleanString("image")
  .max(8_192, "image is too long")
  .regex(/^(https?:\/\/|data:image\/)/i, "image must be an http(s) or data:image URL");

/**
 * Where a mailed link or a sign-in sends the browser afterwards: a path on this site or an
 * absolute URL (identity accepts only its own and its trusted origins).
 */
export const callbackUrlSchema = cleanString("callbackURL").min(1).max(2_048, "callbackURL is too long");

/**
 * Optional fields better-auth's client sends on sign-up and sign-in (`callbackURL`,
 * `rememberMe`), accepted so its client works unchanged.
 */
const betterAuthClientFields = {
  callbackURL: callbackUrlSchema.optional(),
  rememberMe: z.boolean({ error: "rememberMe must be a boolean" }).optional(),
};

/** Body of POST /api/auth/sign-up/email. */
export const signUpBody = z.strictObject({
  email: emailSchema,
  password: passwordSchema,
  name: nameSchema,
  image: imageSchema.optional(),
  ...betterAuthClientFields,
});
export type SignUpBody = z.infer<typeof signUpBody>;

/** Body of POST /api/auth/sign-in/email. */
export const signInBody = z.strictObject({
  email: emailSchema,
  password: cleanString("password")
    .min(1, "password is required")
    .max(PASSWORD_MAX_LENGTH * 4, "password is too long"),
  ...betterAuthClientFields,
});
export type SignInBody = z.infer<typeof signInBody>;

/** The public view of a user. */
export const userSchema = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  emailVerified: z.boolean(),
  image: z.string().nullable().optional(),
  /**
   * True once a second factor is on (better-auth's `twoFactor` plugin field). Identity always
   * sends it; readers accept a user without it.
   */
  twoFactorEnabled: z.boolean().optional(),
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
  /** The organization and team the session works in (better-auth's organization plugin); membership is read per request, never from the JWT. */
  activeOrganizationId: z.string().nullable().optional(),
  activeTeamId: z.string().nullable().optional(),
  /** The admin acting as this user (better-auth's admin plugin). */
  impersonatedBy: z.string().nullable().optional(),
});
export type PublicSession = z.infer<typeof sessionSchema>;

/** Body of sign-up, sign-in and get-session responses. */
export const sessionResponse = z.object({ session: sessionSchema, user: userSchema });
export type SessionResponse = z.infer<typeof sessionResponse>;

/** The second factors a pending sign-in may finish with (better-auth's `twoFactorMethods`). */
export const twoFactorMethodSchema = z.enum(["totp", "otp"]);
export type TwoFactorMethod = z.infer<typeof twoFactorMethodSchema>;

/**
 * Body of a sign-in that waits for a second factor (better-auth's `twoFactor` plugin): no session
 * cookie, only the pending second-factor cookie; the factors the user can finish with.
 */
export const twoFactorRedirectResponse = z.object({
  twoFactorRedirect: z.literal(true),
  twoFactorMethods: z.array(twoFactorMethodSchema),
});
export type TwoFactorRedirectResponse = z.infer<typeof twoFactorRedirectResponse>;

/** Body of POST /api/auth/sign-in/email: signed in, or waiting for the second factor. */
export const signInResponse = z.union([sessionResponse, twoFactorRedirectResponse]);
export type SignInResponse = z.infer<typeof signInResponse>;

/** Body of GET /api/auth/get-session: the session, or `null` when signed out (better-auth's client reads it so). */
export const getSessionResponse = sessionResponse.nullable();

/** Body of POST /api/auth/sign-out. */
export const signOutResponse = z.object({ success: z.literal(true) });

/**
 * Body of a sign-up that signed nobody in (REQUIRE_EMAIL_VERIFICATION): better-auth's
 * `{ token: null, user }`, with no session cookie; the user signs in after following the mailed link.
 */
export const verifyEmailSignUpResponse = z.object({ token: z.null(), user: userSchema });
export type VerifyEmailSignUpResponse = z.infer<typeof verifyEmailSignUpResponse>;

/**
 * Body of POST /api/auth/sign-up/email: a signed-in answer (this identity's `{ session, user }` or
 * better-auth's `{ token, user }`, both with a session cookie) or {@link verifyEmailSignUpResponse}.
 */
export const signUpResponse = z.union([sessionResponse, z.object({ token: z.string(), user: userSchema }), verifyEmailSignUpResponse]);
export type SignUpResponse = z.infer<typeof signUpResponse>;

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

/**
 * Body of POST /api/auth/sign-in/social (better-auth's `signIn.social`). Fields its client may
 * also send (`scopes`, `loginHint`, `requestSignUp`, …) are ignored rather than refused.
 */
export const signInSocialBody = z.object({
  provider: cleanString("provider").min(1).max(64),
  callbackURL: callbackUrlSchema.optional(),
  errorCallbackURL: callbackUrlSchema.optional(),
  newUserCallbackURL: callbackUrlSchema.optional(),
  disableRedirect: z.boolean().optional(),
});
export type SignInSocialBody = z.infer<typeof signInSocialBody>;

/**
 * Body of POST /api/auth/link-social (better-auth's `linkSocial`): the signed-in user adds a
 * provider identity through the provider's redirect. Fields its client may also send (`scopes`,
 * `loginHint`, …) are ignored; an `idToken` (linking without the redirect) is refused: identity
 * links only through the redirect flow, whose state, nonce and PKCE openid-client checks.
 */
export const linkSocialBody = z.object({
  provider: cleanString("provider").min(1).max(64),
  callbackURL: callbackUrlSchema.optional(),
  errorCallbackURL: callbackUrlSchema.optional(),
  disableRedirect: z.boolean().optional(),
  idToken: z
    .unknown()
    .refine((value) => value === undefined, "idToken is not supported: link through the provider's redirect")
    .optional(),
});
export type LinkSocialBody = z.infer<typeof linkSocialBody>;

/** Answer of POST /api/auth/sign-in/social and /link-social: the provider's authorization URL. */
export interface SignInSocialResponse {
  url: string;
  redirect: boolean;
}

/** One entry of GET /api/auth/providers (the web app's sign-in buttons). */
export interface SocialProviderInfo {
  id: string;
  name: string;
}

/**
 * Body of POST /api/auth/unlink-account: better-auth 1.7's `{accountId}` (the id list-accounts
 * returns) or its earlier `{providerId, accountId?}` (accountId: the provider's user id).
 */
export const unlinkAccountBody = z
  .strictObject({
    providerId: cleanString("providerId").min(1).max(64).optional(),
    accountId: cleanString("accountId").min(1).max(255).optional(),
  })
  .refine((b) => b.providerId !== undefined || b.accountId !== undefined, "providerId or accountId is required");
