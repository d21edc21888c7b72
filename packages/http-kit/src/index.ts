export { AppError, type AppErrorOptions, isAppError } from "./app-error.js";
export { commaList, loadConfig, originList, portSchema, trustProxySchema } from "./config.js";
export { currentContext, type RequestContext, runWithContext, setContextUser } from "./context.js";
export { type CorsPolicyOptions, corsPolicy } from "./cors.js";
export { type ErrorHandlerOptions, errorHandler, notFoundHandler, toAppError } from "./error-handler.js";
export { type JsonBodyOptions, jsonBody } from "./json-body.js";
export { createLogger, type LoggerOptions, redactUrl, requestLogging } from "./logger.js";
export { type ServeOptions, serve } from "./serve.js";
export { parseOrThrow } from "./validate.js";
