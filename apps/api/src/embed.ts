/**
 * The API as a library, for processes that build it themselves (bench/src/api-without-auth.ts):
 * the same pieces src/main.ts assembles, published as the `@app/api/embed` entry of
 * package.json so nothing outside this package reaches into `dist/`.
 */
export { type ApiApp, type ApiDeps, createApp, verifierFromConfig } from "./app.js";
export { type ApiConfig, loadApiConfig } from "./config.js";
export { createHttpServer } from "./http-server.js";
