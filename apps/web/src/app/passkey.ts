import type { AppClient, SignInResult } from "@app/client";
import {
  browserSupportsWebAuthn,
  browserSupportsWebAuthnAutofill,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  startAuthentication,
  startRegistration,
  WebAuthnAbortService,
  WebAuthnError,
} from "@simplewebauthn/browser";
import { PasskeyError } from "./messages.js";

/**
 * The browser's side of passkeys, through @simplewebauthn/browser: the client (packages/client)
 * fetches the options and sends the result; this module runs the ceremony in between and turns
 * the browser's refusals into a {@link PasskeyError}, whose sentence messages.ts has.
 */

/** True when this browser can use passkeys at all. */
export function passkeysSupported(): boolean {
  return browserSupportsWebAuthn();
}

/** Wraps what the ceremony threw: a WebAuthn refusal becomes a {@link PasskeyError}; service errors stay. */
function ceremonyError(error: unknown): unknown {
  if (error instanceof WebAuthnError) return new PasskeyError(error.code);
  if (error instanceof DOMException) return new PasskeyError(error.name);
  return error;
}

/** True when the ceremony ended because another one started (or the page stopped it): nothing to say. */
export function wasSuperseded(error: unknown): boolean {
  return error instanceof PasskeyError && error.code === "ERROR_CEREMONY_ABORTED";
}

/** Creates a passkey on this device for the signed-in user and stores it under `name`. */
export async function addPasskey(client: AppClient, name?: string): Promise<void> {
  const options = await client.auth.passkey.registrationOptions();
  let response: Awaited<ReturnType<typeof startRegistration>>;
  try {
    response = await startRegistration({ optionsJSON: options as unknown as PublicKeyCredentialCreationOptionsJSON });
  } catch (error) {
    throw ceremonyError(error);
  }
  await client.auth.passkey.verifyRegistration({ response, ...(name ? { name } : {}) });
}

/**
 * Signs in with a passkey. `autofill` waits for the user to pick one in the email field's
 * suggestions (conditional mediation) instead of opening the browser's dialog; `optionsFetched`
 * is told once the options are in, since a later options call replaces this ceremony's challenge.
 */
export async function signInWithPasskey(client: AppClient, autofill = false, optionsFetched?: () => void): Promise<SignInResult> {
  let options: Awaited<ReturnType<AppClient["auth"]["passkey"]["authenticationOptions"]>>;
  try {
    options = await client.auth.passkey.authenticationOptions();
  } finally {
    optionsFetched?.();
  }
  let response: Awaited<ReturnType<typeof startAuthentication>>;
  try {
    response = await startAuthentication({
      optionsJSON: options as unknown as PublicKeyCredentialRequestOptionsJSON,
      useBrowserAutofill: autofill,
    });
  } catch (error) {
    throw ceremonyError(error);
  }
  return client.auth.passkey.signIn(response);
}

/** A wait for a passkey picked from the email field's suggestions. */
export interface PasskeyAutofill {
  /**
   * Settles once the autofill ceremony has its options (or is not offered): a passkey button
   * waits for it, so its own challenge is the one identity keeps.
   */
  ready: Promise<void>;
  /** Stops waiting (the page is left). */
  stop(): void;
}

/**
 * Offers the account's passkeys in the suggestions of the field marked `autocomplete="… webauthn"`
 * where the browser supports it; `onResult` gets the sign-in, `onError` a failure other than
 * being superseded by another ceremony.
 */
export function offerPasskeyAutofill(
  client: AppClient,
  onResult: (result: SignInResult) => void,
  onError: (error: unknown) => void,
): PasskeyAutofill {
  let stopped = false;
  let fetched: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    fetched = resolve;
  });
  void browserSupportsWebAuthnAutofill()
    .then(async (supported) => {
      if (!supported || stopped) return fetched();
      onResult(await signInWithPasskey(client, true, fetched));
    })
    .catch((error: unknown) => {
      fetched();
      if (!stopped && !wasSuperseded(error)) onError(error);
    });
  return {
    ready,
    stop: () => {
      stopped = true;
      fetched();
      WebAuthnAbortService.cancelCeremony();
    },
  };
}
