import path from "node:path";
import { AUTH_BASE_PATH, MCP_RESOURCE_METADATA_PATH, MCP_RESOURCE_PATH } from "@app/contracts";
import {
  commaList,
  databaseSettingsShape,
  describeSettings,
  environmentSettingsShape,
  flag,
  loadConfig,
  loggingSettingsShape,
  logSettings,
  type MetricsSettings,
  metricsSettings,
  metricsSettingsShape,
  originList,
  refineServerLimits,
  refineSharedSettings,
  SERVICE_LIMITS,
  type ServerLimits,
  serverLimitsOf,
  serverSettingsShape,
  sharedSettingsShape,
  shutdownSettingsShape,
  tokenSettings,
  tracingSettingsShape,
  trustProxySchema,
} from "@app/http-kit";
import { z } from "zod";

const MIB = 1024 * 1024;

/** Upload types accepted when UPLOAD_ALLOWED_TYPES is not set (`type/*` wildcards allowed). */
export const DEFAULT_UPLOAD_TYPES = [
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
  "application/pdf",
  "text/plain",
  "text/markdown",
  "text/csv",
  "application/json",
];

const int = (min: number) => z.coerce.number().int().min(min);

/** A comma-separated list of bare origins (`http://127.0.0.1:3920`): no path, query or credentials. */
const bareOriginList = commaList.pipe(
  z.array(
    z.string().transform((value, ctx) => {
      let url: URL | undefined;
      try {
        url = new URL(value);
      } catch {
        url = undefined;
      }
      if (!url || !/^https?:$/.test(url.protocol) || url.pathname !== "/" || url.search || url.hash || url.username || url.password) {
        ctx.addIssue({ code: "custom", message: `"${value}" is not a bare origin like http://127.0.0.1:3920` });
        return z.NEVER;
      }
      return url.origin;
    }),
  ),
);

/**
 * Largest request head (request line + headers) accepted: 128 KiB, above Node's 16 KiB default,
 * so an oversized bearer token (the verifier caps tokens at 8 KiB) reaches the verifier and gets
 * its 401 envelope instead of a bare 431 from the HTTP parser.
 */
export const DEFAULT_MAX_HEADER_BYTES = 128 * 1024;

const schema = z
  .object({
    ...environmentSettingsShape,
    ...serverSettingsShape({ port: 3002, limits: SERVICE_LIMITS }),
    ...shutdownSettingsShape(10_000),
    ...loggingSettingsShape,
    ...tracingSettingsShape,
    ...metricsSettingsShape,
    ...databaseSettingsShape,
    IDENTITY_URL: z
      .url({ error: "IDENTITY_URL must be an absolute URL" })
      .default("http://127.0.0.1:3001")
      .describe("where the API fetches the JWKS and asks get-session"),
    // BASE_URL, JWT_ISSUER/JWT_AUDIENCE, JWKS_CACHE_MAX_AGE_MS, JWKS_COOLDOWN_MS and
    // KEY_ACTIVATION_DELAY_MS: one definition with identity (packages/http-kit/src/settings/token.ts).
    ...sharedSettingsShape,
    JWKS_STALE_IF_ERROR_MS: int(0).optional().meta({
      description: "how long a key set past its max age still serves while identity is unreachable",
      docDefault: "the verifier's",
    }),
    MAX_HEADER_BYTES: z.coerce
      .number()
      .int()
      .min(8 * 1024)
      .max(1024 * 1024)
      .default(DEFAULT_MAX_HEADER_BYTES)
      .describe("largest request head, so an oversized token gets the verifier's 401 rather than a bare 431"),
    PURGE_INTERVAL_MS: int(100)
      .default(10 * 60 * 1000)
      .describe("interval of the expired MCP OAuth state purge, the upload sweep and the organization deletion sweep"),
    VERIFY_CACHE: flag.default("true").describe("cache verified tokens until they expire"),
    CORS_ORIGINS: originList.meta({
      description: "comma-separated origins allowed with credentials (besides the base URL's)",
      docDefault: "`http://localhost:5173` outside production",
    }),
    CORS_EXPOSE_AUTH_HEADER: flag.default("true").describe("CORS exposes the `set-auth-jwt` response header to the allowed origins"),
    UPLOAD_DIR: z.string().min(1).default(".data/uploads").describe("where uploaded files are stored (relative to the working directory)"),
    UPLOAD_MAX_BYTES: int(1)
      .default(10 * MIB)
      .describe("largest upload"),
    UPLOAD_ALLOWED_TYPES: commaList.meta({
      description: "comma-separated media types accepted for upload (`type/*` wildcards allowed)",
      docDefault: "images, PDF, text, Markdown, CSV, JSON",
    }),
    DATA_ENCRYPTION_KEY: z.string({ error: "DATA_ENCRYPTION_KEY is required" }).min(1, "DATA_ENCRYPTION_KEY is required").meta({
      description: "encrypts stored MCP OAuth tokens; at least 32 characters in production",
      docDefault: "`.data/secrets.json` under `pnpm start`",
    }),
    OPENAI_BASE_URL: z
      .url({ error: "OPENAI_BASE_URL must be an absolute URL" })
      .optional()
      .describe("an OpenAI-compatible provider for text generation; unset: generation is off"),
    OPENAI_API_KEY: z.string().min(1).optional().describe("the provider's API key"),
    OPENAI_MODEL: z.string().min(1).default("gpt-4o-mini").describe("the model asked"),
    OPENAI_TIMEOUT_MS: int(10).default(60_000).describe("deadline of one generation request"),
    MCP_OAUTH_RETURN_URL: z
      .url()
      .optional()
      .meta({ description: "where the MCP OAuth callback sends the browser when done", docDefault: "`BASE_URL/`" }),
    MCP_ALLOW_PRIVATE_URLS: flag
      .default("false")
      .describe("development and tests only: MCP OAuth endpoints may be http and private addresses; refused in production"),
    MCP_ALLOW_PRIVATE_ORIGINS: bareOriginList.describe(
      "development only: comma-separated bare origins that may be http on a private address; refused in production",
    ),
    MCP_CALL_TIMEOUT_MS: int(100).default(30_000).describe("deadline of one MCP tool request"),
    MCP_MAX_RESULT_BYTES: int(1_024).default(MIB).describe("largest MCP tool answer"),
    MCP_MAX_CALLS_PER_USER: int(1).default(4).describe("MCP tool requests one user may run at once (429 beyond)"),
    SSE_HEARTBEAT_MS: int(10).default(15_000).describe("interval of the SSE keep-alive comment"),
    SSE_MAX_BUFFERED_BYTES: int(1).default(MIB).describe("unsent bytes an SSE response may hold before it is ended (slow reader)"),
    SSE_MAX_RESUME_EVENTS: int(1).default(500).describe("most stored events a resume replays; deeper, the stream sends `resync`"),
    RESUME_MAX_BYTES: int(1)
      .default(16 * MIB)
      .describe("bytes all catch-ups of the instance together may hold"),
    RESUME_MAX_WAIT_MS: int(0).default(10_000).describe("how long a resume waits for room before `resync`"),
    MAX_STREAMS_PER_USER: int(1).default(20).describe("concurrent SSE task streams of one user (429 beyond)"),
    MAX_SOCKETS_PER_USER: int(1).default(20).describe("concurrent WebSockets of one user (429 beyond)"),
    MAX_GENERATIONS_PER_USER: int(1).default(3).describe("concurrent generations of one user (429 beyond)"),
    MCP_SERVER_MAX_REQUESTS_PER_USER: int(1)
      .default(8)
      .describe("requests one user may have under way at once at `/api/mcp`, the API's own MCP server (429 beyond)"),
    MCP_SERVER_TOOL_CALLS_PER_MINUTE: int(1)
      .default(120)
      .describe("tool calls one user may make at `/api/mcp` in any 60 seconds (429 beyond)"),
    MAX_PROJECTS_PER_ORGANIZATION: int(1).default(1_000).describe("projects one organization may hold (409 beyond)"),
    REDIS_URL: z
      .url({ error: "REDIS_URL must be a redis:// or rediss:// URL" })
      .optional()
      .describe("holds the per-user counts across instances (in process when unset)"),
    WS_MAX_BUFFERED_BYTES: int(1).default(MIB).describe("unsent bytes a WebSocket may hold before it is closed with 1013 (slow reader)"),
    EVENT_BUS_HEARTBEAT_MS: int(10).default(30_000).describe("interval of the LISTEN connection's liveness probe"),
    EVENT_BUS_HEARTBEAT_TIMEOUT_MS: int(10).default(5_000).describe("how long the probe's `SELECT 1` may take"),
    TRUST_PROXY: trustProxySchema.describe("Express `trust proxy`: `true`/`false`, a hop count, or names/CIDRs"),
  })
  .superRefine((env, ctx) => {
    refineServerLimits(env, ctx);
    refineSharedSettings(env, ctx);
    if (env.NODE_ENV === "production" && env.DATA_ENCRYPTION_KEY.length < 32) {
      ctx.addIssue({
        code: "custom",
        path: ["DATA_ENCRYPTION_KEY"],
        message: "DATA_ENCRYPTION_KEY must be at least 32 characters in production",
      });
    }
    if (env.NODE_ENV === "production" && env.MCP_ALLOW_PRIVATE_URLS === "true") {
      ctx.addIssue({
        code: "custom",
        path: ["MCP_ALLOW_PRIVATE_URLS"],
        message: "MCP_ALLOW_PRIVATE_URLS is for development and tests only; it cannot be set in production",
      });
    }
    if (env.NODE_ENV === "production" && env.MCP_ALLOW_PRIVATE_ORIGINS.length > 0) {
      ctx.addIssue({
        code: "custom",
        path: ["MCP_ALLOW_PRIVATE_ORIGINS"],
        message: "MCP_ALLOW_PRIVATE_ORIGINS is for development and tests only; it cannot be set in production",
      });
    }
  });

/** The variables of the API for docs/configuration.md. */
export const configVariables = describeSettings("api", schema);

/** API service configuration, parsed once at start-up. */
export interface ApiConfig {
  env: "development" | "production" | "test";
  /** The `/metrics` listener (off unless METRICS_PORT is set). */
  metrics: MetricsSettings;
  host: string;
  port: number;
  databaseUrl: string;
  /** Base URL of the identity service (JWKS and get-session live under `/api/auth`). */
  identityUrl: string;
  jwksUrl: string;
  getSessionUrl: string;
  /** Public base URL of the product (the gateway). */
  baseUrl: string;
  issuer: string;
  audience: string;
  jwksStaleIfErrorMs: number | undefined;
  /** Key set cache max age and refetch cooldown (contract defaults 10 min and 30 s when undefined). */
  jwksCacheMaxAgeMs: number | undefined;
  jwksCooldownMs: number | undefined;
  maxHeaderBytes: number;
  /** Interval of the expired OAuth state purge. */
  purgeIntervalMs: number;
  /** How long in-flight requests may take after SIGTERM before connections are cut. */
  shutdownDrainMs: number;
  verifyCache: boolean;
  corsOrigins: string[];
  exposeAuthHeader: boolean;
  /** Absolute upload directory. */
  uploadDir: string;
  uploadMaxBytes: number;
  uploadAllowedTypes: string[];
  dataEncryptionKey: string;
  /** The OpenAI-compatible provider (operator-configured, so not subject to the outbound URL policy). */
  openai: { baseUrl: string; apiKey: string | undefined; model: string; timeoutMs: number } | undefined;
  /** Where the MCP OAuth callback sends the browser when done. */
  mcpReturnUrl: string;
  /** The redirect_uri registered with MCP authorization servers. */
  mcpRedirectUri: string;
  /** Development/test only: MCP OAuth endpoints may be http and private or loopback addresses. */
  mcpAllowPrivateUrls: boolean;
  /**
   * Development only: origins that may be `http:` on a private or loopback address, each alone
   * (the sample MCP server of `MCP_SAMPLE=true pnpm start`); every other URL keeps the full policy.
   */
  mcpAllowPrivateOrigins: string[];
  /** MCP tool requests: deadline, largest answer, and how many one user may run at once (429 beyond). */
  mcpTools: { callTimeoutMs: number; maxResultBytes: number; maxCallsPerUser: number };
  sseHeartbeatMs: number;
  /** Unsent bytes an SSE response may hold before the stream is ended (slow reader). */
  sseMaxBufferedBytes: number;
  /** Most stored events a resume replays; deeper, the stream sends `resync` and continues live. */
  sseMaxResumeEvents: number;
  /**
   * The instance's resume budget: bytes all catch-ups together may hold (each reserves its
   * stream's or socket's buffer budget), and how long a resume waits for room before `resync`.
   */
  resume: { maxBytes: number; maxWaitMs: number };
  /** Concurrent SSE task streams, WebSockets, generations and MCP server requests one user may hold (429 beyond). */
  userCaps: { streams: number; sockets: number; generations: number; mcpRequests: number };
  /**
   * The API's own MCP server (mcp-server/): its resource URL (the `aud` of its access tokens), the
   * address of its protected resource metadata, the issuer of its tokens (the authorization server
   * at the base URL) and the tool calls one user may make per minute.
   */
  mcpServer: { resource: string; metadataUrl: string; issuer: string; toolCallsPerMinute: number };
  /** Projects one organization may hold (409 `conflict` beyond). */
  maxProjectsPerOrganization: number;
  /** Redis holding the per-user counts across instances (in process when unset). */
  redisUrl: string | undefined;
  /** Unsent bytes a WebSocket may hold before it is closed with 1013 (slow reader). */
  wsMaxBufferedBytes: number;
  /** Liveness probe of the LISTEN connection: interval and how long the `SELECT 1` may take. */
  eventBusHeartbeatMs: number;
  eventBusHeartbeatTimeoutMs: number;
  trustProxy: boolean | number | string;
  logLevel: string;
  logFormat: "json" | "pretty";
  /** Connection caps and timeouts of the server (docs/edge-limits.md). */
  limits: ServerLimits;
}

const strip = (url: string) => url.replace(/\/+$/, "");

/** Builds the config from a parsed environment; pure, so tests can call it with a literal. */
export function configFrom(env: z.output<typeof schema>, cwd = process.cwd()): ApiConfig {
  const { baseUrl, issuer, audience } = tokenSettings(env);
  const identityUrl = strip(env.IDENTITY_URL);
  const origins = env.CORS_ORIGINS.length ? env.CORS_ORIGINS : env.NODE_ENV === "production" ? [] : ["http://localhost:5173"];
  return {
    env: env.NODE_ENV,
    host: env.HOST,
    port: env.PORT,
    databaseUrl: env.DATABASE_URL,
    identityUrl,
    jwksUrl: `${identityUrl}${AUTH_BASE_PATH}/jwks`,
    getSessionUrl: `${identityUrl}${AUTH_BASE_PATH}/get-session`,
    baseUrl,
    issuer,
    audience,
    jwksStaleIfErrorMs: env.JWKS_STALE_IF_ERROR_MS,
    jwksCacheMaxAgeMs: env.JWKS_CACHE_MAX_AGE_MS,
    jwksCooldownMs: env.JWKS_COOLDOWN_MS,
    maxHeaderBytes: env.MAX_HEADER_BYTES,
    purgeIntervalMs: env.PURGE_INTERVAL_MS,
    shutdownDrainMs: env.SHUTDOWN_DRAIN_MS,
    verifyCache: env.VERIFY_CACHE === "true",
    corsOrigins: [...new Set([...origins, new URL(baseUrl).origin])],
    exposeAuthHeader: env.CORS_EXPOSE_AUTH_HEADER === "true",
    uploadDir: path.resolve(cwd, env.UPLOAD_DIR),
    uploadMaxBytes: env.UPLOAD_MAX_BYTES,
    uploadAllowedTypes: env.UPLOAD_ALLOWED_TYPES.length ? env.UPLOAD_ALLOWED_TYPES.map((t) => t.toLowerCase()) : DEFAULT_UPLOAD_TYPES,
    dataEncryptionKey: env.DATA_ENCRYPTION_KEY,
    openai: env.OPENAI_BASE_URL
      ? { baseUrl: strip(env.OPENAI_BASE_URL), apiKey: env.OPENAI_API_KEY, model: env.OPENAI_MODEL, timeoutMs: env.OPENAI_TIMEOUT_MS }
      : undefined,
    mcpReturnUrl: env.MCP_OAUTH_RETURN_URL ?? `${baseUrl}/`,
    mcpRedirectUri: `${baseUrl}/api/mcp-oauth/callback`,
    mcpAllowPrivateUrls: env.MCP_ALLOW_PRIVATE_URLS === "true",
    mcpAllowPrivateOrigins: env.MCP_ALLOW_PRIVATE_ORIGINS,
    mcpTools: {
      callTimeoutMs: env.MCP_CALL_TIMEOUT_MS,
      maxResultBytes: env.MCP_MAX_RESULT_BYTES,
      maxCallsPerUser: env.MCP_MAX_CALLS_PER_USER,
    },
    sseHeartbeatMs: env.SSE_HEARTBEAT_MS,
    sseMaxBufferedBytes: env.SSE_MAX_BUFFERED_BYTES,
    sseMaxResumeEvents: env.SSE_MAX_RESUME_EVENTS,
    resume: { maxBytes: env.RESUME_MAX_BYTES, maxWaitMs: env.RESUME_MAX_WAIT_MS },
    userCaps: {
      streams: env.MAX_STREAMS_PER_USER,
      sockets: env.MAX_SOCKETS_PER_USER,
      generations: env.MAX_GENERATIONS_PER_USER,
      mcpRequests: env.MCP_SERVER_MAX_REQUESTS_PER_USER,
    },
    mcpServer: {
      resource: `${baseUrl}${MCP_RESOURCE_PATH}`,
      metadataUrl: `${baseUrl}${MCP_RESOURCE_METADATA_PATH}`,
      issuer: baseUrl,
      toolCallsPerMinute: env.MCP_SERVER_TOOL_CALLS_PER_MINUTE,
    },
    maxProjectsPerOrganization: env.MAX_PROJECTS_PER_ORGANIZATION,
    redisUrl: env.REDIS_URL,
    wsMaxBufferedBytes: env.WS_MAX_BUFFERED_BYTES,
    eventBusHeartbeatMs: env.EVENT_BUS_HEARTBEAT_MS,
    eventBusHeartbeatTimeoutMs: env.EVENT_BUS_HEARTBEAT_TIMEOUT_MS,
    trustProxy: env.TRUST_PROXY,
    logLevel: env.LOG_LEVEL,
    logFormat: logSettings(env).format,
    limits: serverLimitsOf(env),
    metrics: metricsSettings(env),
  };
}

/** Parses `process.env`; exits with status 78 and a clear message when it is invalid. */
export function loadApiConfig(env: NodeJS.ProcessEnv = process.env): ApiConfig {
  return configFrom(loadConfig(schema, env, "api"));
}

/** Parses a partial environment for tests (defaults filled in, NODE_ENV=test). */
export function testConfig(overrides: Record<string, string>): ApiConfig {
  return configFrom(schema.parse({ NODE_ENV: "test", DATA_ENCRYPTION_KEY: "test-data-encryption-key-0123456789", ...overrides }));
}
