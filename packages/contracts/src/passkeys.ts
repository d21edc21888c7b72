import { z } from "zod";
import { cleanString } from "./auth.js";

// The wire of passkeys (WebAuthn), as `@better-auth/passkey` 1.7, so its `passkeyClient` works
// unchanged: apps/identity/src/passkeys/. The WebAuthn JSON shapes are those of
// @simplewebauthn/browser and /server (base64url strings); the ceremony itself is checked by
// @simplewebauthn/server, these schemas only bound the input.

/** Passkeys one user may hold at once. */
export const PASSKEY_MAX_PER_USER = 20;
/** Longest passkey name. */
export const PASSKEY_NAME_MAX_LENGTH = 100;

/** A base64url field of a WebAuthn response, bounded (the JSON body is limited too). */
const base64url = (field: string, max = 8_192) =>
  z
    .string({ error: `${field} is required` })
    .max(max, `${field} is too long`)
    .regex(/^[A-Za-z0-9_-]*={0,2}$/, `${field} is not base64url`);

const transportSchema = z.string().max(32);

/** A passkey's name: trimmed, 1 to {@link PASSKEY_NAME_MAX_LENGTH} characters. */
export const passkeyNameSchema = cleanString("name")
  .trim()
  .min(1, "name is required")
  .max(PASSKEY_NAME_MAX_LENGTH, `name must be at most ${PASSKEY_NAME_MAX_LENGTH} characters`);

/** Query of GET /api/auth/passkey/generate-register-options (better-auth's `addPasskey` sends them). */
export const passkeyRegisterOptionsQuery = z.object({
  authenticatorAttachment: z.enum(["platform", "cross-platform"]).optional(),
  name: cleanString("name").max(PASSKEY_NAME_MAX_LENGTH).optional(),
  context: cleanString("context").max(1_000).optional(),
});
export type PasskeyRegisterOptionsQuery = z.infer<typeof passkeyRegisterOptionsQuery>;

const credentialDescriptor = z.object({ id: z.string(), type: z.literal("public-key"), transports: z.array(z.string()).optional() });

/** Answer of generate-register-options: `PublicKeyCredentialCreationOptionsJSON`. */
export const passkeyRegistrationOptionsResponse = z.object({
  challenge: z.string(),
  rp: z.object({ name: z.string(), id: z.string().optional() }),
  user: z.object({ id: z.string(), name: z.string(), displayName: z.string() }),
  pubKeyCredParams: z.array(z.object({ type: z.literal("public-key"), alg: z.number() })),
  timeout: z.number().optional(),
  excludeCredentials: z.array(credentialDescriptor).optional(),
  authenticatorSelection: z
    .object({
      authenticatorAttachment: z.string().optional(),
      residentKey: z.string().optional(),
      requireResidentKey: z.boolean().optional(),
      userVerification: z.string().optional(),
    })
    .optional(),
  attestation: z.string().optional(),
  extensions: z.unknown().optional(),
});
export type PasskeyRegistrationOptionsResponse = z.infer<typeof passkeyRegistrationOptionsResponse>;

/** Answer of generate-authenticate-options: `PublicKeyCredentialRequestOptionsJSON`. */
export const passkeyAuthenticationOptionsResponse = z.object({
  challenge: z.string(),
  timeout: z.number().optional(),
  rpId: z.string().optional(),
  allowCredentials: z.array(credentialDescriptor).optional(),
  userVerification: z.string().optional(),
  extensions: z.unknown().optional(),
});
export type PasskeyAuthenticationOptionsResponse = z.infer<typeof passkeyAuthenticationOptionsResponse>;

/** `RegistrationResponseJSON` as @simplewebauthn/browser's `startRegistration` returns it. */
export const passkeyRegistrationCredential = z.looseObject({
  id: base64url("id", 1_400),
  rawId: base64url("rawId", 1_400),
  type: z.literal("public-key", { error: "type must be public-key" }),
  response: z.looseObject({
    clientDataJSON: base64url("clientDataJSON"),
    attestationObject: base64url("attestationObject"),
    authenticatorData: base64url("authenticatorData").optional(),
    transports: z.array(transportSchema).max(10).optional(),
    publicKeyAlgorithm: z.number().optional(),
    publicKey: base64url("publicKey").optional(),
  }),
  clientExtensionResults: z.record(z.string(), z.unknown()).optional().default({}),
  authenticatorAttachment: z.enum(["platform", "cross-platform"]).optional(),
});

/** `AuthenticationResponseJSON` as @simplewebauthn/browser's `startAuthentication` returns it. */
export const passkeyAuthenticationCredential = z.looseObject({
  id: base64url("id", 1_400),
  rawId: base64url("rawId", 1_400),
  type: z.literal("public-key", { error: "type must be public-key" }),
  response: z.looseObject({
    clientDataJSON: base64url("clientDataJSON"),
    authenticatorData: base64url("authenticatorData"),
    signature: base64url("signature"),
    userHandle: base64url("userHandle", 1_000).optional(),
  }),
  clientExtensionResults: z.record(z.string(), z.unknown()).optional().default({}),
  authenticatorAttachment: z.enum(["platform", "cross-platform"]).optional(),
});

/**
 * POST /api/auth/passkey/verify-registration. `createSession` is accepted for better-auth's
 * client and changes nothing: registration needs a signed-in session already.
 */
export const verifyPasskeyRegistrationBody = z.strictObject({
  response: passkeyRegistrationCredential,
  name: passkeyNameSchema.optional(),
  createSession: z.boolean().optional(),
});
export type VerifyPasskeyRegistrationBody = z.infer<typeof verifyPasskeyRegistrationBody>;

/** POST /api/auth/passkey/verify-authentication. */
export const verifyPasskeyAuthenticationBody = z.strictObject({ response: passkeyAuthenticationCredential });
export type VerifyPasskeyAuthenticationBody = z.infer<typeof verifyPasskeyAuthenticationBody>;

/** A stored passkey as better-auth's passkey row reads (public key in standard base64). */
export const passkeySchema = z.object({
  id: z.string(),
  name: z.string().nullable(),
  publicKey: z.string(),
  userId: z.string(),
  credentialID: z.string(),
  counter: z.number(),
  deviceType: z.string(),
  backedUp: z.boolean(),
  transports: z.string().nullable(),
  createdAt: z.string(),
  aaguid: z.string().nullable(),
});
export type PasskeyView = z.infer<typeof passkeySchema>;

/** Answer of GET /api/auth/passkey/list-user-passkeys. */
export const listPasskeysResponse = z.array(passkeySchema);

const passkeyIdSchema = cleanString("id").min(1, "id is required").max(200, "id is too long");

/** POST /api/auth/passkey/delete-passkey. */
export const deletePasskeyBody = z.strictObject({ id: passkeyIdSchema });
export type DeletePasskeyBody = z.infer<typeof deletePasskeyBody>;

/** Answer of delete-passkey. */
export const deletePasskeyResponse = z.object({ status: z.literal(true) });

/** POST /api/auth/passkey/update-passkey: a new name. */
export const updatePasskeyBody = z.strictObject({ id: passkeyIdSchema, name: passkeyNameSchema });
export type UpdatePasskeyBody = z.infer<typeof updatePasskeyBody>;

/** Answer of update-passkey. */
export const updatePasskeyResponse = z.object({ passkey: passkeySchema });
