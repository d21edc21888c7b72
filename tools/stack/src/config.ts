// The launcher's own variables (`pnpm start`, `pnpm dev`, `pnpm test`), one zod schema per command
// as the services have (apps/*/src/config.ts): parsed once, an invalid value stops the command with
// one line per problem and status 78, and docs/configuration.md's launcher table is generated from
// the descriptions here (config-doc.ts). The variables the launcher hands to the services without
// deciding anything (LOG_FORMAT, CORS_ORIGINS, SMTP_URL...) belong to the services' schemas.
import path from "node:path";
import { describeSettings, loadConfig, portSchema, type VariableDoc } from "@app/http-kit";
import { z } from "zod";
import { ROOT } from "./paths.js";

/** Unset and empty mean the same, as the launcher's `||` and truthiness checks read them. */
const optionalText = z
  .string()
  .optional()
  .transform((value) => value || undefined);

/** An empty value reads as unset, as the launcher's `=== "true"` and `!== "off"` checks read it. */
const emptyAsUnset = <T extends z.ZodType>(schema: T) => z.preprocess((value) => (value === "" ? undefined : value), schema);

/** A `true`/`false` switch: only `true` turns it on. */
const onSwitch = emptyAsUnset(z.enum(["true", "false"]).optional());

const startSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development").meta({
    description:
      "passed to every service; `production` leaves out the mail catcher, the sample MCP server and the local IdP (their logins accept anyone)",
  }),
  PORT: portSchema.default(3000).describe("the gateway's port: the one base URL"),
  WEB_PORT: z
    .string()
    .default("5173")
    .refine((value) => value === "off" || portSchema.safeParse(value).success, "a port number, or `off`")
    .transform((value) => (value === "off" ? undefined : Number(value)))
    .meta({ description: "the web app's port; `off` leaves the web app out", docDefault: "5173" }),
  EMBEDDED_PG_PORT: portSchema.default(54329).describe("the embedded PostgreSQL's port (used when `DATABASE_URL` is unset)"),
  DATABASE_URL: optionalText.meta({
    description: "a PostgreSQL server to use as is (migrated at start); unset: the embedded PostgreSQL under `STACK_DATA_DIR`",
  }),
  IDENTITY_DATABASE_URL: optionalText.meta({
    description: "identity's own URL when `DATABASE_URL` names your server ([database roles](database-roles.md))",
    docDefault: "the embedded roles, else `DATABASE_URL`",
  }),
  API_DATABASE_URL: optionalText.meta({
    description: "the API's own URL when `DATABASE_URL` names your server ([database roles](database-roles.md))",
    docDefault: "the embedded roles, else `DATABASE_URL`",
  }),
  STACK_DATA_DIR: z.string().optional().meta({
    description: "the embedded database, the development secrets, uploads, `stack.json`",
    docDefault: "`.data/` in the repository",
  }),
  AUTH_SECRET: optionalText.meta({
    description: "passed to identity",
    docDefault: "generated into `STACK_DATA_DIR/secrets.json`",
  }),
  DATA_ENCRYPTION_KEY: optionalText.meta({
    description: "passed to the API",
    docDefault: "generated into `STACK_DATA_DIR/secrets.json`",
  }),
  BASE_URL: optionalText.meta({
    description: "passed to the services; the gateway still listens on `PORT`",
    docDefault: "`http://localhost:<PORT>`",
  }),
  UPLOAD_DIR: z.string().optional().meta({ description: "passed to the API", docDefault: "`STACK_DATA_DIR/uploads`" }),
  STACK_BUILD: emptyAsUnset(z.enum(["on", "off"]).default("on")).describe("`off` skips the build (bin/start.mjs)"),
  MCP_SAMPLE: onSwitch.describe("`true` also runs a sample MCP server with OAuth ([MCP](mcp.md)); never in production"),
  LOCAL_IDP: onSwitch.describe(
    "`true` also runs a local OpenID Provider, offered as “Continue with Local IdP” ([sign-in providers](sign-in-providers.md)); never in production",
  ),
  LOCAL_IDP_PORT: portSchema.default(0).describe("the local OpenID Provider's port (0: a free one)"),
  STACK_DEV: emptyAsUnset(z.literal("1").optional()).describe(
    "set by `pnpm dev` (bin/dev.mjs): services restart when rebuilt, the web app runs on Vite's dev server",
  ),
  STACK_STARTED_AT: z.coerce
    .number()
    .optional()
    .meta({ description: "when the command began, so the times printed include the build", docDefault: "set by bin/start.mjs" }),
});

const testSchema = z.object({
  TEST_DATABASE_URL: z.string().optional().meta({
    description: "the PostgreSQL server the tests use as is",
    docDefault: "`DATABASE_URL`, else a throw-away embedded PostgreSQL",
  }),
  DATABASE_URL: z.string().optional().describe("the PostgreSQL server the tests use when `TEST_DATABASE_URL` is unset"),
  REDIS_URL: z.string().optional().describe("the Redis of the Redis suites (passed to the tests); unset: those suites skip"),
  CI: z.string().optional().describe("`true` makes an unset `REDIS_URL` an error, so the Redis suites never skip unseen in CI"),
});

/** The label of the variables the launcher sets for its service processes, not for anyone to set. */
export const SET_FOR_SERVICES = "the services (set by `pnpm start`)";

/**
 * Variables read outside a schema, documented here so the table stays complete: the one the
 * launcher sets for the services (processes.ts; their health answers report it), `pnpm migrate`'s
 * (packages/db/src/cli/migrate.ts) and the web app's build-time one (apps/web/vite.config.ts).
 */
const otherVariables: VariableDoc[] = [
  {
    name: "STACK_INSTANCE_ID",
    service: SET_FOR_SERVICES,
    default: "unset",
    description: "a nonce per service process, reported by its health answers so a test tells a restarted one apart",
  },
  {
    name: "DATABASE_URL",
    service: "`pnpm migrate`",
    default: "required",
    description: "an administrator's URL: the migrations create the tables and the services' roles",
  },
  {
    name: "IDENTITY_DATABASE_PASSWORD / API_DATABASE_PASSWORD",
    service: "`pnpm migrate`",
    default: "unset",
    description: "sets the password of the role `auth_identity` / `auth_api` ([database roles](database-roles.md))",
  },
  {
    name: "VITE_API_BASE_URL",
    service: "`pnpm build`",
    default: "`http://localhost:3000`",
    description: "the web app's service base URL baked in at build time; the served `/config.js` (`API_BASE_URL`) overrides it",
  },
];

/** The launcher's and the commands' rows of docs/configuration.md, `service` naming the command. */
export const launcherVariables: VariableDoc[] = [
  ...describeSettings("`pnpm start`, `pnpm dev`", startSchema),
  ...describeSettings("`pnpm test`", testSchema),
  ...otherVariables,
];

/** `pnpm start` and `pnpm dev` (start.ts), parsed. */
export interface LauncherConfig {
  nodeEnv: "development" | "production" | "test";
  port: number;
  /** Undefined: `WEB_PORT=off`. */
  webPort: number | undefined;
  embeddedPgPort: number;
  databaseUrl: string | undefined;
  serviceDatabaseUrls: { identity: string | undefined; api: string | undefined };
  dataDir: string;
  authSecret: string | undefined;
  dataEncryptionKey: string | undefined;
  baseUrl: string | undefined;
  uploadDir: string;
  mcpSample: boolean;
  localIdp: boolean;
  localIdpPort: number;
  dev: boolean;
  /** Epoch milliseconds, when bin/start.mjs passed them. */
  startedAt: number | undefined;
}

/** Builds the config from a parsed environment; pure, so tests can call it with a literal. */
function configFrom(env: z.output<typeof startSchema>): LauncherConfig {
  const dataDir = env.STACK_DATA_DIR ?? path.join(ROOT, ".data");
  return {
    nodeEnv: env.NODE_ENV,
    port: env.PORT,
    webPort: env.WEB_PORT,
    embeddedPgPort: env.EMBEDDED_PG_PORT,
    databaseUrl: env.DATABASE_URL,
    serviceDatabaseUrls: { identity: env.IDENTITY_DATABASE_URL, api: env.API_DATABASE_URL },
    dataDir,
    authSecret: env.AUTH_SECRET,
    dataEncryptionKey: env.DATA_ENCRYPTION_KEY,
    baseUrl: env.BASE_URL,
    uploadDir: env.UPLOAD_DIR ?? `${dataDir}/uploads`,
    mcpSample: env.MCP_SAMPLE === "true",
    localIdp: env.LOCAL_IDP === "true",
    localIdpPort: env.LOCAL_IDP_PORT,
    dev: env.STACK_DEV === "1",
    startedAt: env.STACK_STARTED_AT || undefined,
  };
}

/** Parses an environment for `pnpm start`; exits with status 78 and one line per problem when it is invalid. */
export function loadLauncherConfig(env: NodeJS.ProcessEnv = process.env): LauncherConfig {
  return configFrom(loadConfig(startSchema, env, "pnpm start"));
}

let parsed: LauncherConfig | undefined;

/** `pnpm start`'s configuration from `process.env`, parsed on first use (start.ts, progress.ts). */
export function launcherConfig(): LauncherConfig {
  parsed ??= loadLauncherConfig();
  return parsed;
}

/** `pnpm test` (test.ts), parsed. */
export interface TestRunnerConfig {
  /** The server to use as is; undefined: a throw-away embedded PostgreSQL. */
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  ci: boolean;
}

/** Parses an environment for `pnpm test`; exits with status 78 when it is invalid. */
export function loadTestRunnerConfig(env: NodeJS.ProcessEnv = process.env): TestRunnerConfig {
  const parsedEnv = loadConfig(testSchema, env, "pnpm test");
  return { databaseUrl: parsedEnv.TEST_DATABASE_URL ?? parsedEnv.DATABASE_URL, redisUrl: parsedEnv.REDIS_URL, ci: parsedEnv.CI === "true" };
}
