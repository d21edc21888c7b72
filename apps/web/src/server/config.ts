import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  describeSettings,
  environmentSettingsShape,
  loadConfig,
  loggingSettingsShape,
  logSettings,
  refineServerLimits,
  SERVICE_LIMITS,
  type ServerLimits,
  serverLimitsOf,
  serverSettingsShape,
} from "@app/http-kit";
import { z } from "zod";

const schema = z
  .object({
    ...environmentSettingsShape,
    ...serverSettingsShape({ port: 5173, limits: SERVICE_LIMITS }),
    ...loggingSettingsShape,
    API_BASE_URL: z
      .url({ error: "API_BASE_URL must be an absolute URL" })
      .default("http://localhost:3000")
      .describe("the service base URL the web app calls, written into `/config.js` and its content security policy"),
    WEB_ROOT: z.string().min(1).optional().meta({ description: "the built web app to serve", docDefault: "`apps/web/dist/public`" }),
    // Bounds as apps/web/src/app/config.ts reads them: at most an hour between checks.
    SESSION_RECHECK_SECONDS: z.coerce
      .number()
      .int()
      .min(1, "SESSION_RECHECK_SECONDS must be at least 1")
      .max(3600, "SESSION_RECHECK_SECONDS must be at most 3600")
      .default(60)
      .describe(
        "seconds (1 to 3600) between the app's session checks; it also checks at start and on focus ([web app](web-app.md#signing-out-other-devices))",
      ),
  })
  .superRefine(refineServerLimits);

/** The variables of the web server for docs/configuration.md. */
export const configVariables = describeSettings("web", schema);

/** The web server's configuration, parsed once at start-up. */
export interface WebServerConfig {
  host: string;
  port: number;
  root: string;
  apiBaseUrl: string;
  sessionRecheckSeconds: number;
  logLevel: string;
  logFormat: "json" | "pretty";
  limits: ServerLimits;
}

const DEFAULT_ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "public");

/** Parses `process.env`; exits with status 78 and a clear message when it is invalid. */
export function loadWebServerConfig(env: NodeJS.ProcessEnv = process.env): WebServerConfig {
  const v = loadConfig(schema, env, "web");
  const log = logSettings(v);
  return {
    host: v.HOST,
    port: v.PORT,
    root: v.WEB_ROOT ?? DEFAULT_ROOT,
    apiBaseUrl: v.API_BASE_URL,
    sessionRecheckSeconds: v.SESSION_RECHECK_SECONDS,
    logLevel: log.level,
    logFormat: log.format,
    limits: serverLimitsOf(v),
  };
}
