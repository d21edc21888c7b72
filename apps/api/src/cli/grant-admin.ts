#!/usr/bin/env node
// Grants the "admin" role to an existing user, by email: `pnpm admin:grant <email>`. The root
// script runs it through tools/doctor's with-local-db wrapper, which fills DATABASE_URL from
// `pnpm start`'s .data/ when it is unset. DATABASE_URL is the API's (role auth_api): it finds the user in user_directory and writes
// user_role (docs/database-roles.md). The user must have signed up first. Running it twice is harmless.
import { ADMIN_ROLE, emailSchema } from "@app/contracts";
import { createDb } from "@app/db";
import { RolesService } from "../admin/roles.js";

const url = process.env.DATABASE_URL;
const parsed = emailSchema.safeParse(process.argv[2] ?? "");
if (!url || !parsed.success) {
  console.error("usage: pnpm admin:grant <email>   (DATABASE_URL: the API's database; found by itself for pnpm start's local stack)");
  process.exit(2);
}
const db = createDb(url, { max: 1 });
try {
  const granted = await new RolesService(db.prisma).grantByEmail(parsed.data, ADMIN_ROLE);
  if (!granted) {
    console.error(`no user with email ${parsed.data}: sign up first`);
    process.exitCode = 1;
  } else {
    console.log(`granted ${ADMIN_ROLE} to ${parsed.data} (user ${granted.userId})`);
  }
} catch (error) {
  console.error((error as Error).message);
  process.exitCode = 1;
} finally {
  await db.close();
}
