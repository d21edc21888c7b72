import type { ManagedRole } from "@app/contracts";

/**
 * better-auth's default access statements of the admin plugin (`adminAc`): what the admin role
 * may do. The user role may do none of it. Impersonating admins is in no role.
 */
const ADMIN_STATEMENTS: Readonly<Record<string, readonly string[]>> = {
  user: ["create", "list", "set-role", "ban", "impersonate", "delete", "set-password", "set-email", "set-phone", "get", "update"],
  session: ["list", "revoke", "delete"],
};

/** True when `role` grants every action asked (better-auth's `hasPermission`). */
export function roleAllows(role: ManagedRole, permissions: Readonly<Record<string, readonly string[]>>): boolean {
  if (role !== "admin") return false;
  return Object.entries(permissions).every(([resource, actions]) => {
    const granted = Object.hasOwn(ADMIN_STATEMENTS, resource) ? ADMIN_STATEMENTS[resource] : undefined;
    return granted !== undefined && actions.every((action) => granted.includes(action));
  });
}
