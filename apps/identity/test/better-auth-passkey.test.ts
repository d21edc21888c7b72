import { passkeyClient } from "@better-auth/passkey/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { betterAuthServer } from "./better-auth-kit.js";
import { ORIGIN } from "./kit.js";
import { type MailKit, mailKit } from "./mail-kit.js";
import { installBrowserWebAuthn, SoftwareAuthenticator } from "./webauthn-authenticator.js";

// better-auth's official client with `passkeyClient()` from @better-auth/passkey, unchanged,
// against a real identity listening on a free port. It runs in Node: a cookie jar stands in for
// the browser's cookies, and a software authenticator (real P-256 keys) for its WebAuthn API,
// which @simplewebauthn/browser, inside the passkey client, calls as it would in a page.

let kit: MailKit;
const server = betterAuthServer(async () => {
  kit = await mailKit();
  return kit;
});
const authenticator = new SoftwareAuthenticator("ES256", ORIGIN);
let uninstall: () => void = () => undefined;
beforeAll(() => {
  uninstall = installBrowserWebAuthn(authenticator);
});
afterAll(() => uninstall());

/** A better-auth client with the passkey plugin and its own cookie jar (one simulated browser). */
const browser = () => server.browser([passkeyClient()]);

describe("better-auth's passkey client against identity", () => {
  it("adds a passkey, signs out, signs in with it, and lists, renames and deletes it", async () => {
    const email = `ba-passkey-${Date.now()}@example.com`;
    const b = browser();
    expect((await b.client.signUp.email({ email, password: "correct horse battery", name: "Ba Passkey" })).error).toBeNull();
    const userId = (await b.client.getSession()).data?.user.id;
    expect(userId).toBeTruthy();

    const added = await b.client.passkey.addPasskey({ name: "Software key" });
    expect(added.error).toBeNull();
    expect(added.data).toMatchObject({ name: "Software key", userId, credentialID: authenticator.credentials[0]?.idB64 });
    expect((await kit.mailTo(email, "A passkey was added")).links).toEqual([`${kit.config.baseUrl}/account/security`]);

    // The same authenticator again: excludeCredentials names it, so the browser refuses.
    const twice = await b.client.passkey.addPasskey({ name: "Again" });
    expect(twice.error).toMatchObject({ code: "ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED", status: 400 });

    expect((await b.client.signOut()).error).toBeNull();
    expect((await b.client.getSession()).data).toBeNull();

    const signedIn = await b.client.signIn.passkey();
    expect(signedIn.error).toBeNull();
    expect(signedIn.data).toMatchObject({ user: { id: userId, email }, session: { userId } });
    const session = await b.client.getSession();
    expect(session.data?.user.id).toBe(userId);

    // A browser that never signed in: the authenticator offers its discoverable credential.
    const other = browser();
    expect((await other.client.signIn.passkey()).error).toBeNull();
    expect((await other.client.getSession()).data?.user.id).toBe(userId);

    const listed = await b.client.passkey.listUserPasskeys();
    expect(listed.error).toBeNull();
    expect(listed.data).toHaveLength(1);
    const id = listed.data?.[0]?.id ?? "";
    expect(listed.data?.[0]).toMatchObject({ name: "Software key", counter: 2 });

    const renamed = await b.client.passkey.updatePasskey({ id, name: "Renamed key" });
    expect(renamed.error).toBeNull();
    expect(renamed.data?.passkey).toMatchObject({ id, name: "Renamed key" });

    const stranger = browser();
    await stranger.client.signUp.email({ email: `ba-stranger-${Date.now()}@example.com`, password: "correct horse battery", name: "S" });
    const refused = await stranger.client.passkey.deletePasskey({ id });
    expect(refused.error).toMatchObject({ status: 404, code: "not_found" });

    const deleted = await b.client.passkey.deletePasskey({ id });
    expect(deleted.data).toEqual({ status: true });
    expect((await b.client.passkey.listUserPasskeys()).data).toEqual([]);

    // The deleted passkey signs no one in.
    const gone = await browser().client.signIn.passkey();
    expect(gone.error).toMatchObject({ status: 400, code: "passkey_verification_failed" });
  });
});
