import { z } from "zod";

// The wire of passkeys, as `@better-auth/passkey` 1.7: apps/identity/src/passkeys/.
export const passkeyWire = z.object({});
