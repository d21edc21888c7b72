import { z } from "zod";

/** `NODE_ENV`, which decides the production rules of every service. */
export const environmentSettingsShape = {
  NODE_ENV: z
    .enum(["development", "production", "test"])
    .default("development")
    .describe("`production` turns on the production rules (required secrets, verification, no development routes)"),
};
