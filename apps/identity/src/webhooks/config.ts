/**
 * The webhook variables (docs/operations.md#webhooks), spread into identity's schema in
 * config.ts. Every variable needs a zod schema with a description (tools/stack/src/config-doc.ts).
 */
export const webhookSettingsShape = {};

/** The parsed webhook settings, as configFrom hands them on. */
export type WebhookSettings = Record<string, never>;

/** Builds the webhook settings from the parsed environment and the runtime environment. */
export function webhookSettings(_env: Record<string, unknown>, _nodeEnv: string): WebhookSettings {
  return {};
}
