// The OpenTelemetry SDK of a service, loaded by index.ts only when tracing is on: this module is
// the only one that imports @opentelemetry packages other than the API.
import { register } from "node:module";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { type InstrumentationBase, registerInstrumentations } from "@opentelemetry/instrumentation";
import { ExpressInstrumentation, ExpressLayerType } from "@opentelemetry/instrumentation-express";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import { RedisInstrumentation } from "@opentelemetry/instrumentation-redis";
import { UndiciInstrumentation } from "@opentelemetry/instrumentation-undici";
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import { RedactingSpanProcessor } from "./redaction.js";
import type { TracingOptions } from "./types.js";

/** How long (ms) an ended span waits in the batch when `OTEL_BSP_SCHEDULE_DELAY` is unset. */
const DEFAULT_SCHEDULE_DELAY_MS = 1000;

/** Paths asked all the time by probes and scrapers: no trace for them. */
const UNTRACED_PATHS = new Set(["/healthz", "/readyz", "/metrics"]);

function untraced(url: string | undefined): boolean {
  const path = (url ?? "/").split("?")[0] ?? "/";
  return UNTRACED_PATHS.has(path);
}

/**
 * The instrumentations of every service. Headers are never recorded (no
 * `headersToSpanAttributes`), so Authorization and Cookie stay out of spans; Redis commands are
 * recorded by name only, since keys carry addresses and e-mail addresses; database and Redis
 * spans are recorded inside a traced request only, not for every poll of a background job.
 */
function instrumentations(): InstrumentationBase[] {
  return [
    new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => untraced(req.url) }),
    new UndiciInstrumentation(),
    // Middleware (body parsers, CORS, helmet) and router layers would add a span each to every
    // request; the route's handler span names the route (`http.route`) of the request's span.
    new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER] }),
    new PgInstrumentation({ requireParentSpan: true }),
    new RedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
  ];
}

/**
 * The modules the instrumentations patch, for the ESM loader hook: the services are ES modules,
 * and a CommonJS package they import (express, pg) is only seen by the hook of
 * import-in-the-middle; patching is limited to these modules instead of wrapping every import.
 */
function patchedModules(list: InstrumentationBase[]): string[] {
  return [...new Set(list.flatMap((i) => i.getModuleDefinitions().map((d) => d.name)))];
}

/**
 * Registers the loader hook and the instrumentations, then the tracer provider (global, with
 * AsyncLocalStorage context and the W3C trace context and baggage propagators); loads the URL
 * redactor last so that what it imports is instrumented.
 */
export async function startSdk(options: TracingOptions): Promise<{ shutdown(): Promise<void> }> {
  const list = instrumentations();
  register("@opentelemetry/instrumentation/hook.mjs", import.meta.url, { data: { include: patchedModules(list) } });
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the environment detector) win over the name
  // the service gives itself.
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName }))
    .merge(detectResources({ detectors: [envDetector] }));
  const redacting = new RedactingSpanProcessor();
  const batch = new BatchSpanProcessor(
    // The endpoint, headers, timeout and compression come from the OTEL_EXPORTER_OTLP_* variables.
    new OTLPTraceExporter(),
    process.env.OTEL_BSP_SCHEDULE_DELAY === undefined ? { scheduledDelayMillis: DEFAULT_SCHEDULE_DELAY_MS } : {},
  );
  const provider = new NodeTracerProvider({ resource, spanProcessors: [redacting, batch] });
  provider.register();
  registerInstrumentations({ instrumentations: list, tracerProvider: provider });
  redacting.use(await options.loadUrlRedactor());
  let stopped: Promise<void> | undefined;
  const shutdown = () => {
    stopped ??= provider.shutdown().catch(() => undefined);
    return stopped;
  };
  // A process that ends on its own (no signal, no process.exit) still sends its last spans.
  process.once("beforeExit", () => void shutdown());
  return { shutdown };
}
