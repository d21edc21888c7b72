import { startTracing } from "@app/telemetry";

// Tracing starts before the service's modules load, so its instrumentations see express, pg, the
// Redis client and node:http from the start (packages/telemetry/src/index.ts); main.ts is the
// service itself.
await startTracing({ serviceName: "gateway" });
await import("./main.js");
