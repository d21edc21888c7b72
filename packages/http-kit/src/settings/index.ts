export { databaseSettingsShape } from "./database.js";
export { describeSettings, type VariableDoc } from "./document.js";
export { environmentSettingsShape } from "./environment.js";
export { loadConfig } from "./load.js";
export { loggingSettingsShape, logSettings } from "./logging.js";
export { type MetricsSettings, metricsSettings, metricsSettingsShape } from "./metrics.js";
export {
  EDGE_LIMITS,
  loadServerLimits,
  refineServerLimits,
  SERVICE_LIMITS,
  type ServerLimits,
  type ServerLimitsEnv,
  serverLimitsOf,
  serverSettingsShape,
  shutdownSettingsShape,
} from "./server.js";
export {
  baseUrlSetting,
  DEFAULT_BASE_URL,
  DEFAULT_JWKS_CACHE_MAX_AGE_MS,
  DEFAULT_JWKS_COOLDOWN_MS,
  DEFAULT_KEY_ACTIVATION_DELAY_MS,
  refineSharedSettings,
  type SharedSettingsEnv,
  sharedSettingsShape,
  tokenSettings,
} from "./token.js";
export { tracingSettingsShape } from "./tracing.js";
export { commaList, flag, originList, portSchema, trustProxySchema } from "./values.js";
