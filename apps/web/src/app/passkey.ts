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
    response = await startRegistration({ optionsJSON: options as PublicKeyCredentialCreationOptionsJSON });
  } catch (error) {
    throw ceremonyError(error);
  }
  await client.auth.passkey.verifyRegistration({ response, ...(name ? { name } : {}) });
}

/** Runs the browser's sign-in ceremony with the service's options. */
async function assertion(options: unknown, autofill: boolean): Promise<Awaited<ReturnType<typeof startAuthentication>>> {
  try {
    return await startAuthentication({ optionsJSON: options as PublicKeyCredentialRequestOptionsJSON, useBrowserAutofill: autofill });
  } catch (error) {
    throw ceremonyError(error);
  }
}

/** Signs in with a passkey through the browser's dialog. */
export async function signInWithPasskey(client: AppClient): Promise<SignInResult> {
  const response = await assertion(await client.auth.passkey.authenticationOptions(), false);
  return client.auth.passkey.signIn(response);
}

/** A wait for a passkey picked from the email field's suggestions. */
export interface PasskeyAutofill {
  /**
   * Settles once the autofill ceremony has its options (or is not offered): a passkey button
   * waits for it, since identity keeps the challenge of the latest options call only.
   */
  ready: Promise<void>;
  /** Stops waiting (the page is left). */
  stop(): void;
}

/**
 * Offers the account's passkeys in the suggestions of the field marked `autocomplete="… webauthn"`
 * where the browser supports it. Nothing shows until the user picks a passkey: the offer that
 * cannot start (no support, options refused) or ends unpicked stays silent; once a passkey is
 * picked, `onResult` gets the sign-in or `onError` its failure.
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
  const offer = async () => {
    if (!(await browserSupportsWebAuthnAutofill()) || stopped) return;
    const options = await client.auth.passkey.authenticationOptions().catch(() => undefined);
    fetched();
    if (!options || stopped) return;
    const response = await assertion(options, true).catch(() => undefined);
    if (!response || stopped) return;
    try {
      onResult(await client.auth.passkey.signIn(response));
    } catch (error) {
      if (!stopped) onError(error);
    }
  };
  void offer()
    .catch(() => undefined)
    .finally(() => fetched());
  return {
    ready,
    stop: () => {
      stopped = true;
      fetched();
      WebAuthnAbortService.cancelCeremony();
    },
  };
}
