import { AppError } from "@app/http-kit";
import type { RequestHandler } from "express";
import { requireAuth } from "../entry/stream-auth.js";
import type { RolesService } from "../services/roles.js";

/**
 * Roles middleware for admin routes: runs after authentication and reads the caller's rows in
 * `user_role` exactly once per request (roles are never taken from the JWT). 403 `forbidden`
 * without the role.
 */
export function requireRole(roles: RolesService, role: string): RequestHandler {
  return async (req, _res, next) => {
    const auth = requireAuth(req);
    const granted = await roles.rolesOf(auth.userId);
    if (!granted.includes(role)) throw new AppError("forbidden", `the ${role} role is required`);
    next();
  };
}
