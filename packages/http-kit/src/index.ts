export { AppError, type AppErrorOptions, isAppError } from "./app-error.js";
export { commaList, loadConfig, originList, portSchema, trustProxySchema } from "./config.js";
export { currentContext, type RequestContext, runWithContext, setContextUser } from "./context.js";
export { type CorsPolicyOptions, corsPolicy } from "./cors.js";
export { errorBody, type WriteErrorOptions, writeError, writeUpgradeError } from "./envelope.js";
export { type ErrorHandlerOptions, errorHandler, notFoundHandler, toAppError } from "./error-handler.js";
export { type JsonBodyOptions, jsonBody } from "./json-body.js";
export { createLogger, type LogFormat, type LoggerOptions, logFormat, redactUrl, requestLogging } from "./logger.js";
export * from "./route/index.js";
export { type SecurityHeadersOptions, securityHeaders } from "./security-headers.js";
export {
  EDGE_LIMITS,
  isRefusedConnection,
  limitConnections,
  loadServerLimits,
  SERVICE_LIMITS,
  type ServeOptions,
  type ServerLimits,
  serve,
  serverOptions,
} from "./serve.js";
export {
  DEFAULT_BASE_URL,
  DEFAULT_JWKS_CACHE_MAX_AGE_MS,
  DEFAULT_JWKS_COOLDOWN_MS,
  DEFAULT_KEY_ACTIVATION_DELAY_MS,
  KEY_SET_CHANNEL,
  KEY_SET_EVENT_MAX_KIDS,
  type KeySetEvent,
  keySetEventSchema,
  refineSharedSettings,
  type SharedSettingsEnv,
  sharedSettingsShape,
  tokenSettings,
} from "./shared-settings.js";
export { parseOrThrow } from "./validate.js";
