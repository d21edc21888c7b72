import { loadConfig, originList, portSchema, trustProxySchema } from "@app/http-kit";
import { z } from "zod";

const DAY = 24 * 60 * 60 * 1000;

const schema = z
  .object({
    NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
    HOST: z.string().default("127.0.0.1"),
    PORT: portSchema.default(3001),
    DATABASE_URL: z.string({ error: "DATABASE_URL is required" }).min(1, "DATABASE_URL is required"),
    AUTH_SECRET: z.string({ error: "AUTH_SECRET is required" }).min(1, "AUTH_SECRET is required"),
    BASE_URL: z.url({ error: "BASE_URL must be an absolute URL" }).optional(),
    CORS_ORIGINS: originList,
    CORS_EXPOSE_AUTH_HEADER: z.enum(["true", "false"]).default("true"),
    COOKIE_PREFIX: z
      .string()
      .regex(/^[\w-]+$/, "COOKIE_PREFIX may hold letters, digits, _ and -")
      .default("identity"),
    JWT_ISSUER: z.string().optional(),
    JWT_AUDIENCE: z.string().optional(),
    SESSION_TTL_DAYS: z.coerce.number().positive().max(400, "SESSION_TTL_DAYS must be at most 400").default(7),
    TRUST_PROXY: trustProxySchema,
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  })
  .superRefine((env, ctx) => {
    if (env.NODE_ENV === "production" && env.AUTH_SECRET.trim().length < 32) {
      ctx.addIssue({ code: "custom", path: ["AUTH_SECRET"], message: "AUTH_SECRET must be at least 32 characters in production" });
    }
    if (env.NODE_ENV === "production" && !env.BASE_URL) {
      ctx.addIssue({ code: "custom", path: ["BASE_URL"], message: "BASE_URL is required in production (JWT issuer, cookie Secure flag)" });
    }
  });

/** Identity service configuration, parsed once at start-up. */
export interface IdentityConfig {
  env: "development" | "production" | "test";
  host: string;
  port: number;
  databaseUrl: string;
  authSecret: string;
  baseUrl: string;
  corsOrigins: string[];
  exposeAuthHeader: boolean;
  cookieName: string;
  secureCookies: boolean;
  issuer: string;
  audience: string;
  sessionTtlMs: number;
  trustProxy: boolean | number | string;
  logLevel: string;
}

/** Builds the config from an environment; pure, so tests can call it with a literal. */
export function configFrom(env: z.output<typeof schema>): IdentityConfig {
  const baseUrl = (env.BASE_URL ?? "http://localhost:3000").replace(/\/+$/, "");
  const origins = env.CORS_ORIGINS.length ? env.CORS_ORIGINS : env.NODE_ENV === "production" ? [] : ["http://localhost:5173"];
  return {
    env: env.NODE_ENV,
    host: env.HOST,
    port: env.PORT,
    databaseUrl: env.DATABASE_URL,
    authSecret: env.AUTH_SECRET,
    baseUrl,
    corsOrigins: [...new Set([...origins, new URL(baseUrl).origin])],
    exposeAuthHeader: env.CORS_EXPOSE_AUTH_HEADER === "true",
    cookieName: `${env.COOKIE_PREFIX}.session_token`,
    secureCookies: baseUrl.startsWith("https:"),
    issuer: env.JWT_ISSUER ?? baseUrl,
    audience: env.JWT_AUDIENCE ?? baseUrl,
    sessionTtlMs: env.SESSION_TTL_DAYS * DAY,
    trustProxy: env.TRUST_PROXY,
    logLevel: env.LOG_LEVEL,
  };
}

/** Parses `process.env`; exits with a clear message when it is invalid. */
export function loadIdentityConfig(env: NodeJS.ProcessEnv = process.env): IdentityConfig {
  return configFrom(loadConfig(schema, env, "identity"));
}

/** Parses a partial environment for tests (defaults filled in). */
export function testConfig(overrides: Record<string, string>): IdentityConfig {
  return configFrom(schema.parse({ NODE_ENV: "test", ...overrides }));
}
