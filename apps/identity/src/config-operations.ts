import { z } from "zod";

/**
 * The variables of the security event log and webhooks (docs/operations.md), spread into
 * identity's schema in config.ts.
 */
export const operationsSettingsShape = {
  AUTH_EVENT_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3650)
    .default(90)
    .describe("days a security event is kept before the background sweep deletes it"),
};

/** The parsed operations settings, as configFrom hands them on. */
export interface OperationsSettings {
  /** Security events older than this are swept (ms). */
  eventRetentionMs: number;
}

/** Builds the operations settings from the parsed environment. */
export function operationsSettings(env: { AUTH_EVENT_RETENTION_DAYS: number }): OperationsSettings {
  return { eventRetentionMs: env.AUTH_EVENT_RETENTION_DAYS * 24 * 60 * 60 * 1000 };
}
