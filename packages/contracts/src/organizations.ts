import { z } from "zod";

// The wire of organizations, members, invitations and teams, as better-auth 1.7's
// `organization` plugin: apps/identity/src/organizations/.
export const organizationWire = z.object({});
