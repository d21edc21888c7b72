import { AUTH_BASE_PATH } from "@app/contracts";
import type { Guard } from "@app/http-kit";
import type { IdentityGuards } from "../middleware/guards.js";

/** The OpenAPI tag of every organization route. */
export const TAG = "organizations";

/** A path under better-auth's organization plugin's base (`/api/auth/organization`). */
export const orgPath = (name: string) => `${AUTH_BASE_PATH}/organization/${name}`;

/** The guard lists the organization routes share: every one is signed in. */
export interface OrgGuards {
  /** GET: origin, no-store, cookies, session. */
  read: readonly Guard[];
  /** POST: origin, no-store, the JSON body, cookies, session. */
  write: readonly Guard[];
  /** invite-member: the mail limits per IP before the body and per address after it. */
  mail: readonly Guard[];
}

export function orgGuards(guards: IdentityGuards): OrgGuards {
  return {
    read: [guards.origin, guards.noStore, guards.cookies, guards.signedIn],
    write: [guards.origin, guards.noStore, guards.body, guards.cookies, guards.signedIn],
    mail: [
      guards.origin,
      guards.noStore,
      guards.limits.mailPerIp,
      guards.body,
      guards.limits.mailPerAddress,
      guards.cookies,
      guards.signedIn,
    ],
  };
}
