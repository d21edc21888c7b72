#!/usr/bin/env node
// `pnpm dev`: `pnpm start` with a development loop (tools/stack/src/dev.ts): services restart
// when their code is rebuilt, the web app runs on Vite's dev server with hot reload, on the
// same base URL and web origin as `pnpm start`.
process.env.STACK_DEV = "1";
await import("./start.mjs");
