import { OutboundUrlPolicy, OutboundUrlRefused, pinnedPost } from "@app/http-kit/outbound";
import { Webhook } from "standardwebhooks";
import type { WebhookSettings } from "./config.js";

/** The most of an endpoint's answer read (then discarded): only its status matters. */
const MAX_ANSWER_BYTES = 4 * 1024;
/** The longest reason kept in the delivery log. */
const MAX_REASON_LENGTH = 300;

/**
 * The outbound policy of webhook requests (packages/http-kit/src/outbound/): `https:` to public
 * addresses only; outside production also `http:` and this host's loopback.
 */
export function webhookUrlPolicy(settings: Pick<WebhookSettings, "allowLoopback">): OutboundUrlPolicy {
  return new OutboundUrlPolicy({ allowPrivate: false, allowLoopback: settings.allowLoopback });
}

/** One signed request to an endpoint. */
export interface SignedRequest {
  url: string;
  /** The message id: `webhook-id`, the same on every attempt. */
  messageId: string;
  /** The JSON body, signed as it is sent. */
  body: string;
  /** The endpoint's `whsec_` secret. */
  secret: string;
  /** The time signed as `webhook-timestamp`: the attempt's, so receivers' replay windows hold. */
  at: Date;
}

/** What an attempt got: a status (any, 2xx meaning delivered) or why there was none. */
export type SendOutcome = { status: number } | { status: null; reason: string };

/**
 * Sends one Standard Webhooks request: signed with the endpoint's secret (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature`), to an address the outbound policy checked and the
 * connection is pinned to (no DNS rebinding, no private address in production), no redirect
 * followed, one deadline for the whole exchange, and at most a few KiB of the answer read.
 */
export async function sendSigned(request: SignedRequest, policy: OutboundUrlPolicy, timeoutMs: number): Promise<SendOutcome> {
  const signature = new Webhook(request.secret).sign(request.messageId, request.at, request.body);
  const deadline = Date.now() + timeoutMs;
  try {
    const target = await withinDeadline(policy.resolve(request.url), timeoutMs);
    const answer = await pinnedPost(target, {
      headers: {
        "content-type": "application/json",
        "user-agent": "identity-webhooks",
        "webhook-id": request.messageId,
        "webhook-timestamp": String(Math.floor(request.at.getTime() / 1000)),
        "webhook-signature": signature,
      },
      body: request.body,
      timeoutMs: Math.max(1, deadline - Date.now()),
      maxBytes: MAX_ANSWER_BYTES,
    });
    return { status: answer.status };
  } catch (error) {
    return { status: null, reason: describeFailure(error, timeoutMs) };
  }
}

/** `work`, or a TimeoutError after `ms` (a DNS lookup takes no abort signal, so its wait is cut here). */
function withinDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error("deadline passed"), { name: "TimeoutError" })), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** A sentence for the delivery log: what went wrong, never the endpoint's answer. */
export function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof OutboundUrlRefused) return clip(`the URL was refused: ${error.message}`);
  const { name, code } = (error ?? {}) as { name?: string; code?: string };
  if (name === "TimeoutError" || name === "AbortError" || code === "ABORT_ERR") return `no answer within ${timeoutMs} ms`;
  if (code === "ECONNREFUSED") return "the connection was refused";
  if (code === "ECONNRESET" || code === "EPIPE") return "the connection was closed before the answer";
  return clip(`the request failed (${code ?? name ?? "unknown error"})`);
}

/** The log's sentence for an answer that was not 2xx. */
export function describeStatus(status: number): string {
  return `the endpoint answered ${status}`;
}

function clip(text: string): string {
  return text.length > MAX_REASON_LENGTH ? `${text.slice(0, MAX_REASON_LENGTH - 1)}…` : text;
}
