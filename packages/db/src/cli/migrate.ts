#!/usr/bin/env node
// `pnpm migrate`: applies prisma/migrations to DATABASE_URL.
import { migrate } from "../migrate.js";

const url = process.env.DATABASE_URL;
if (!url) {
  console.error("DATABASE_URL is not set. `pnpm start` migrates its embedded database by itself.");
  process.exit(2);
}
try {
  const { applied } = await migrate(url);
  console.log(applied.length ? `applied: ${applied.join(", ")}` : "database is up to date");
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
