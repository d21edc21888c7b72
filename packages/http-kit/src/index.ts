export { AppError, type AppErrorOptions, isAppError } from "./app-error.js";
export {
  addressKey,
  connectionReserve,
  createLimitedServer,
  isRefusedConnection,
  type LimitedServerOptions,
  limitConnections,
  serverOptions,
} from "./connections.js";
export { currentContext, type RequestContext, runWithContext, setContextUser } from "./context.js";
export { type CorsPolicyOptions, corsPolicy } from "./cors.js";
export { type Drain, type DrainOutcome, politeDrain } from "./drain.js";
export { errorBody, type WriteErrorOptions, writeError, writeUpgradeError } from "./envelope.js";
export { type ErrorHandlerOptions, errorHandler, notFoundHandler, toAppError } from "./error-handler.js";
export { type JsonBodyOptions, jsonBody } from "./json-body.js";
export { createLogger, type LogFormat, type LoggerOptions, logFormat, redactUrl, requestLogging } from "./logger.js";
export * from "./metrics/index.js";
export * from "./route/index.js";
export { type SecurityHeadersOptions, securityHeaders } from "./security-headers.js";
export { type ServeOptions, serve } from "./serve.js";
export * from "./settings/index.js";
export { parseOrThrow } from "./validate.js";
