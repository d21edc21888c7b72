export * from "./auth.js";
export * from "./envelope.js";
export * from "./errors.js";
export * from "./headers.js";
