import { z } from "zod";
import { type LogFormat, logFormat } from "../logger.js";

const LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/** The logging variables, spread into every service's schema. */
export const loggingSettingsShape = {
  LOG_LEVEL: z.enum(LEVELS).default("info").describe("pino level"),
  LOG_FORMAT: z
    .string()
    .optional()
    .superRefine((value, ctx) => {
      try {
        logFormat({ LOG_FORMAT: value });
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message });
      }
    })
    .meta({
      description: "`json` or `pretty` (readable lines); `pnpm start` asks its services for `pretty` when it writes to a terminal",
      docDefault: "`pretty` in development on a terminal, else `json`",
    }),
};

/** The level and format of the service's logger (createLogger's options) from its parsed variables. */
export function logSettings(
  env: { LOG_LEVEL: string; LOG_FORMAT?: string | undefined; NODE_ENV?: string | undefined },
  isTTY = process.stdout.isTTY === true,
): { level: string; format: LogFormat } {
  return { level: env.LOG_LEVEL, format: logFormat({ LOG_FORMAT: env.LOG_FORMAT, NODE_ENV: env.NODE_ENV }, isTTY) };
}
