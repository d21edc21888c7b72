#!/usr/bin/env node
// `pnpm migrate`: applies prisma/migrations to DATABASE_URL (an admin URL: the migrations create
// the service roles and hand them their tables). With IDENTITY_DATABASE_PASSWORD and/or
// API_DATABASE_PASSWORD set, it then sets the password of auth_identity / auth_api
// (docs/database-roles.md); docker/compose.yaml uses that.
import { migrate } from "../migrate.js";
import { API_ROLE, IDENTITY_ROLE, setRolePassword } from "../roles.js";

const url = process.env.DATABASE_URL;
if (!url) {
  console.error("DATABASE_URL is not set. `pnpm start` migrates its embedded database by itself.");
  process.exit(2);
}
try {
  const { applied } = await migrate(url);
  console.log(applied.length ? `applied: ${applied.join(", ")}` : "database is up to date");
  for (const [role, variable] of [
    [IDENTITY_ROLE, "IDENTITY_DATABASE_PASSWORD"],
    [API_ROLE, "API_DATABASE_PASSWORD"],
  ] as const) {
    const password = process.env[variable];
    if (!password) continue;
    await setRolePassword(url, role, password);
    console.log(`password of ${role} set from ${variable}`);
  }
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
