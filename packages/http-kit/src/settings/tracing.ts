import { z } from "zod";

/**
 * The OpenTelemetry variables of identity, the API and the gateway (docs/operations.md#traces).
 * packages/telemetry reads them before the configuration loads (each server.ts starts tracing
 * first) and the OpenTelemetry SDK reads them itself; listed here so they are validated and
 * documented with the rest.
 */
export const tracingSettingsShape = {
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .url()
    .optional()
    .describe("OTLP/HTTP base URL spans are exported to (`<url>/v1/traces`); tracing is off when unset"),
  OTEL_SDK_DISABLED: z.enum(["true", "false"]).optional().describe("`true` turns tracing off even with an endpoint set"),
  OTEL_SERVICE_NAME: z.string().min(1).optional().meta({
    description: "`service.name` of the exported spans",
    docDefault: "the service's name (`identity`, `api`, `gateway`)",
  }),
  OTEL_RESOURCE_ATTRIBUTES: z.string().optional().describe("more resource attributes of the spans, `key=value,key=value`"),
  OTEL_EXPORTER_OTLP_HEADERS: z.string().optional().describe("headers of every export, `key=value,key=value` (a collector's API key)"),
  OTEL_BSP_SCHEDULE_DELAY: z.coerce.number().int().positive().optional().meta({
    description: "ms ended spans wait before they are sent in a batch",
    docDefault: "`1000`",
  }),
  OTEL_TRACES_SAMPLER: z.string().optional().meta({
    description: "sampler, e.g. `parentbased_traceidratio` (with `OTEL_TRACES_SAMPLER_ARG`)",
    docDefault: "every trace (`parentbased_always_on`)",
  }),
  OTEL_TRACES_SAMPLER_ARG: z.string().optional().describe("the sampler's argument, e.g. `0.1`"),
};
