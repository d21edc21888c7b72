export { createDb, type Db, type DbOptions } from "./client.js";
export { isDatabaseUnavailable, isInvalidInput, isUniqueViolation } from "./errors.js";
export type { Account, Jwks, Session, User, UserRole } from "./generated/prisma/client.js";
export { Prisma, PrismaClient } from "./generated/prisma/client.js";
