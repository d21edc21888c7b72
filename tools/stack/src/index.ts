export { ensureDatabase, openStackDatabase, type StackDatabase } from "./database.js";
export { launchStack, type RunningStack, type StackOptions } from "./launch.js";
export { ENTRY, ROOT } from "./paths.js";
export { type ServiceProcess, startProcess, stopProcess, waitHealthy } from "./processes.js";
export { type DevSecrets, loadDevSecrets } from "./secrets.js";
