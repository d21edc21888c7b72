/**
 * The access control of better-auth 1.7's organization plugin with its default roles
 * (plugins/organization/access/statement): what each role may do, per resource. A member holds
 * one or more roles, stored comma-separated (`"admin,member"`); it may do what any of them may.
 */
const STATEMENTS: Record<string, Record<string, readonly string[]>> = {
  owner: {
    organization: ["update", "delete"],
    member: ["create", "update", "delete"],
    invitation: ["create", "cancel"],
    team: ["create", "update", "delete"],
    ac: ["create", "read", "update", "delete"],
  },
  admin: {
    organization: ["update"],
    member: ["create", "update", "delete"],
    invitation: ["create", "cancel"],
    team: ["create", "update", "delete"],
    ac: ["create", "read", "update", "delete"],
  },
  member: { organization: [], member: [], invitation: [], team: [], ac: ["read"] },
};

/** The role that founds an organization and that one member at least always holds. */
export const OWNER = "owner";

/** The roles of a stored role value (`"admin, member"` → `["admin", "member"]`). */
export function roleList(role: string): string[] {
  return role
    .split(",")
    .map((r) => r.trim())
    .filter(Boolean);
}

/** Whether a stored role value includes the owner role. */
export function isOwner(role: string): boolean {
  return roleList(role).includes(OWNER);
}

/** A request of permissions: resource → actions, all of which must be allowed. */
export type Permissions = Record<string, readonly string[]>;

/**
 * Whether one of the roles of `role` allows every action asked for on every resource, as
 * better-auth's `role.authorize` with its AND connector: an unknown resource, or a resource asked
 * for with no action, is refused.
 */
export function permits(role: string, permissions: Permissions): boolean {
  const asked = Object.entries(permissions);
  if (asked.length === 0) return false;
  return roleList(role).some((name) => {
    const statements = Object.hasOwn(STATEMENTS, name) ? STATEMENTS[name] : undefined;
    if (!statements) return false;
    return asked.every(([resource, actions]) => {
      // Own properties only: a resource named `constructor` is unknown, not Object's.
      const allowed = Object.hasOwn(statements, resource) ? statements[resource] : undefined;
      return allowed !== undefined && actions.length > 0 && actions.every((action) => allowed.includes(action));
    });
  });
}

/** Shorthand of {@link permits} for one action on one resource. */
export function may(role: string, resource: string, action: string): boolean {
  return permits(role, { [resource]: [action] });
}
