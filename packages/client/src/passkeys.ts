import {
  deletePasskeyResponse,
  listPasskeysResponse,
  type PasskeyAuthenticationOptionsResponse,
  type PasskeyRegistrationOptionsResponse,
  type PasskeyView,
  passkeyAuthenticationOptionsResponse,
  passkeyRegistrationOptionsResponse,
  passkeySchema,
  type UpdatePasskeyBody,
  updatePasskeyResponse,
} from "@app/contracts";
import type { Http } from "./http.js";
import { identityCall, identityJson, type SignInResult, signInAnswer } from "./sign-in.js";

/**
 * The JSON a browser's WebAuthn call produced (`RegistrationResponseJSON` or
 * `AuthenticationResponseJSON`, as @simplewebauthn/browser's `startRegistration` and
 * `startAuthentication` return them). The client passes it on as it is; identity checks it.
 */
export interface WebAuthnResponseJSON {
  id: string;
  rawId: string;
  type: string;
  response: object;
  clientExtensionResults?: object;
  authenticatorAttachment?: string;
}

/** Options of {@link PasskeyApi.registrationOptions}. */
export interface RegistrationOptionsQuery {
  authenticatorAttachment?: "platform" | "cross-platform";
  name?: string;
}

/**
 * Passkeys (`@better-auth/passkey`'s wire, apps/identity/src/passkeys/). The browser's own WebAuthn
 * call sits between the options and the verify call: the client stays free of browser code, so
 * the page calls `startRegistration` / `startAuthentication` (e.g. from @simplewebauthn/browser)
 * with the options and hands the result back here. Identity keeps each ceremony's challenge
 * behind a short-lived cookie, so options and verify run in the same browser.
 */
export interface PasskeyApi {
  /** Step 1 of adding a passkey to the signed-in user: `PublicKeyCredentialCreationOptionsJSON`. */
  registrationOptions(query?: RegistrationOptionsQuery): Promise<PasskeyRegistrationOptionsResponse>;
  /** Step 2: stores the passkey the browser created; answers it. */
  verifyRegistration(body: { response: WebAuthnResponseJSON; name?: string }): Promise<PasskeyView>;
  /**
   * Step 1 of a sign-in with a passkey: `PublicKeyCredentialRequestOptionsJSON` (no allow-list:
   * any passkey of this site the authenticator holds, which suits autofill).
   */
  authenticationOptions(): Promise<PasskeyAuthenticationOptionsResponse>;
  /** Step 2: identity checks the assertion and opens the session; step 2 of the login follows. */
  signIn(response: WebAuthnResponseJSON): Promise<SignInResult>;
  /** The signed-in user's passkeys. */
  list(): Promise<PasskeyView[]>;
  /** Renames one of the user's passkeys. */
  rename(body: UpdatePasskeyBody): Promise<PasskeyView>;
  /** Deletes one of the user's passkeys. */
  delete(body: { id: string }): Promise<void>;
}

/**
 * Drops `clientExtensionResults`, as better-auth's passkey client does before the verify call: the
 * extensions the server asks for come back inside the signed data, not beside it.
 */
function credential(response: WebAuthnResponseJSON): Omit<WebAuthnResponseJSON, "clientExtensionResults"> {
  const { clientExtensionResults: _dropped, ...rest } = response;
  return rest;
}

/** Builds the {@link PasskeyApi} over a transport. */
export function passkeyApi(http: Http): PasskeyApi {
  return {
    registrationOptions: (query = {}) =>
      identityJson(http, passkeyRegistrationOptionsResponse, "/passkey/generate-register-options", { query: { ...query } }),
    verifyRegistration: ({ response, name }) =>
      identityJson(http, passkeySchema, "/passkey/verify-registration", {
        body: { response: credential(response), ...(name ? { name } : {}) },
      }),
    authenticationOptions: () => identityJson(http, passkeyAuthenticationOptionsResponse, "/passkey/generate-authenticate-options"),
    signIn: async (response) => {
      const answer = await identityCall(http, "/passkey/verify-authentication", { body: { response: credential(response) } });
      return signInAnswer(http, answer);
    },
    list: () => identityJson(http, listPasskeysResponse, "/passkey/list-user-passkeys"),
    rename: async (body) => (await identityJson(http, updatePasskeyResponse, "/passkey/update-passkey", { body })).passkey,
    delete: async (body) => {
      await identityJson(http, deletePasskeyResponse, "/passkey/delete-passkey", { body });
    },
  };
}
