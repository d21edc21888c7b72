import {
  baseUrlSetting,
  commaList,
  describeSettings,
  EDGE_LIMITS,
  environmentSettingsShape,
  loadConfig,
  loggingSettingsShape,
  logSettings,
  refineServerLimits,
  type ServerLimits,
  serverLimitsOf,
  serverSettingsShape,
  shutdownSettingsShape,
  tracingSettingsShape,
} from "@app/http-kit";
import { z } from "zod";
import { devMailUpstream } from "./gateway.js";

const upstreams = (name: string) =>
  commaList
    .refine((l) => l.length > 0, `${name} needs at least one URL`)
    .meta({
      description: `comma-separated base URLs of the ${name === "IDENTITY_UPSTREAMS" ? "identity" : "API"} processes, used round robin`,
      docDefault: "required (set by `pnpm start`)",
    });

const schema = z
  .object({
    ...environmentSettingsShape,
    ...serverSettingsShape({ port: 3000, limits: EDGE_LIMITS }),
    // Below the launcher's 10 s stop grace (tools/stack/src/processes.ts), so the drain ends first.
    ...shutdownSettingsShape(8_000),
    ...loggingSettingsShape,
    ...tracingSettingsShape,
    IDENTITY_UPSTREAMS: upstreams("IDENTITY_UPSTREAMS"),
    API_UPSTREAMS: upstreams("API_UPSTREAMS"),
    DEV_MAIL_URL: z
      .url()
      .optional()
      .describe("the launcher's development mailbox (tools/stack/src/dev-mail.ts), served at `/dev/mail`; ignored in production"),
    // Its host is, besides loopback names, the one `/dev/mail` answers on.
    BASE_URL: baseUrlSetting,
  })
  .superRefine(refineServerLimits);

/** The variables of the gateway for docs/configuration.md. */
export const configVariables = describeSettings("gateway", schema);

/** Gateway configuration, parsed once at start-up. */
export interface GatewayConfig {
  host: string;
  port: number;
  identity: string[];
  api: string[];
  logLevel: string;
  logFormat: "json" | "pretty";
  shutdownDrainMs: number;
  limits: ServerLimits;
  /** The development mailbox's URL, never in production (gateway.ts). */
  devMail: string | undefined;
  baseUrl: string | undefined;
}

/** Builds the config from a parsed environment; pure, so tests can call it with a literal. */
export function configFrom(env: z.output<typeof schema>): GatewayConfig {
  const log = logSettings(env);
  return {
    host: env.HOST,
    port: env.PORT,
    identity: env.IDENTITY_UPSTREAMS,
    api: env.API_UPSTREAMS,
    logLevel: log.level,
    logFormat: log.format,
    shutdownDrainMs: env.SHUTDOWN_DRAIN_MS,
    limits: serverLimitsOf(env),
    devMail: devMailUpstream(env),
    baseUrl: env.BASE_URL,
  };
}

/** Parses `process.env`; exits with status 78 and a clear message when it is invalid. */
export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  return configFrom(loadConfig(schema, env, "gateway"));
}

/** Parses a partial environment for tests. */
export function testConfig(overrides: Record<string, string>): GatewayConfig {
  return configFrom(schema.parse({ NODE_ENV: "test", ...overrides }));
}
