import { z } from "zod";

/** The database variable of the services that hold data (identity and the API). */
export const databaseSettingsShape = {
  DATABASE_URL: z.string({ error: "DATABASE_URL is required" }).min(1, "DATABASE_URL is required").meta({
    description:
      "PostgreSQL connection string: each service's own role ([database roles](database-roles.md)); for `pnpm migrate`, an admin",
    docDefault: "embedded under `pnpm start`",
  }),
};
