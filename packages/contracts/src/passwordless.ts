import { z } from "zod";

// The wire of sign-in by mail, as better-auth 1.7's `magicLink` and `emailOTP` plugins:
// apps/identity/src/passwordless/.
export const passwordlessWire = z.object({});
