import { z } from "zod";

// The wire of operators' user management, as better-auth 1.7's `admin` plugin:
// apps/identity/src/admin/.
export const identityAdminWire = z.object({});
