import { z } from "zod";

// The wire of second factors (TOTP, backup codes, emailed codes), as better-auth 1.7's
// `twoFactor` plugin: apps/identity/src/two-factor/.
export const twoFactorWire = z.object({});
