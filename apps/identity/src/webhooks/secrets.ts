import { randomBytes } from "node:crypto";
import { SecretBox } from "@app/secret-box";

/** The packages/secret-box purpose of endpoint secrets: a key of their own under AUTH_SECRET. */
const SEAL_PURPOSE = "webhook-endpoint-secret";

/** A new Standard Webhooks signing secret: `whsec_` and 32 random bytes, base64. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/**
 * Endpoint signing secrets at rest: sealed with AUTH_SECRET and bound to their endpoint, so a
 * sealed secret copied to another row does not open. A new AUTH_SECRET leaves them unreadable:
 * deliveries then fail with a sentence saying so, and the endpoint is registered again.
 */
export class WebhookSecrets {
  readonly #box: SecretBox;

  constructor(authSecret: string) {
    this.#box = new SecretBox(authSecret, SEAL_PURPOSE);
  }

  seal(endpointId: string, secret: string): string {
    return this.#box.seal(secret, `webhook_endpoint:${endpointId}`);
  }

  /** The secret, or undefined when this AUTH_SECRET cannot open it. */
  open(endpointId: string, sealed: string): string | undefined {
    return this.#box.open(sealed, `webhook_endpoint:${endpointId}`);
  }
}
