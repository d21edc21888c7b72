import { expect } from "vitest";
import { ORIGIN } from "../kit.js";
import { type CreationOptions, type RequestOptions, SoftwareAuthenticator } from "../webauthn-authenticator.js";
import type { ConformanceContext } from "./context.js";

/**
 * Answers every route of passkeys (route-conformance.test.ts): a new user adds a passkey from a
 * software authenticator, a signed-out browser signs in with it, the owner asks for sign-in
 * options (GET and POST), lists, renames and deletes it.
 */
export async function drive(ctx: ConformanceContext): Promise<void> {
  const authenticator = new SoftwareAuthenticator("ES256", ORIGIN);
  const email = ctx.fresh("passkey");
  const owner = ctx.client();
  await ctx.expectJson(await owner.post("/api/auth/sign-up/email", { email, password: ctx.password, name: "Passkey" }));

  const creation = await ctx.expectJson(await owner.get("/api/auth/passkey/generate-register-options?name=Key"));
  const response = authenticator.registrationJSON(creation as unknown as CreationOptions);
  const added = await ctx.expectJson(await owner.post("/api/auth/passkey/verify-registration", { response, name: "Key" }));
  expect((await ctx.mailTo(email, "A passkey was added")).links).toEqual([`${ctx.baseUrl}/account/security`]);

  const visitor = ctx.client();
  const request = await ctx.expectJson(await visitor.get("/api/auth/passkey/generate-authenticate-options"));
  const assertion = authenticator.authenticationJSON(request as unknown as RequestOptions);
  const signedIn = await ctx.expectJson(await visitor.post("/api/auth/passkey/verify-authentication", { response: assertion }));
  expect((signedIn.user as { email: string }).email).toBe(email);

  const listed = await ctx.expectJson(await owner.post("/api/auth/passkey/generate-authenticate-options", {}));
  expect(listed.allowCredentials).toHaveLength(1);
  expect(await ctx.expectJson(await visitor.get("/api/auth/passkey/list-user-passkeys"))).toHaveLength(1);
  await ctx.expectJson(await owner.post("/api/auth/passkey/update-passkey", { id: added.id, name: "Renamed" }));
  expect(await ctx.expectJson(await owner.post("/api/auth/passkey/delete-passkey", { id: added.id }))).toEqual({ status: true });
}
