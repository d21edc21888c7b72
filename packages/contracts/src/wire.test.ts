import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { type JwtUserClaims, jwtClaimsSchema, type PublicJwk, publicJwkSchema, userDeletionRowSchema } from "./index.js";

describe("the wire between identity and its readers", () => {
  it("publishes keys that the JWKS schema reads back unchanged", () => {
    const key = {
      kty: "OKP",
      crv: "Ed25519",
      x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo",
      kid: "k1",
      alg: "EdDSA",
      use: "sig",
    } satisfies PublicJwk;
    const read: z.infer<typeof publicJwkSchema> = key;
    expect(publicJwkSchema.parse(key)).toEqual(read);
  });

  it("signs user claims that the claims schema reads", () => {
    const user: JwtUserClaims = { name: "Ada", email: "ada@example.com" };
    const claims = { sub: "u1", iat: 1, exp: 2, iss: "https://id.example", aud: "https://api.example", ...user };
    expect(jwtClaimsSchema.parse(claims)).toEqual(claims);
  });

  it("describes a pending user_deletion row", () => {
    const row = { user_id: "u1", requested_at: new Date(), api_done_at: null, completed_at: null };
    expect(userDeletionRowSchema.parse(row)).toEqual(row);
  });
});
