import type { Context } from "@opentelemetry/api";
import type { ReadableSpan, Span, SpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { UrlRedactor } from "./types.js";

const REDACTED = "[REDACTED]";

/** Attributes holding a whole URL, or a path with its query (old and current HTTP conventions). */
const URL_ATTRIBUTES = ["url.full", "http.url", "http.target", "url.path"];
/** Attributes holding a query string (with its `?` from fetch, without it from node:http). */
const QUERY_ATTRIBUTES = ["url.query"];
/** A recorded header that carries credentials (only recorded if someone configures it). */
const CREDENTIAL_HEADER = /^http\.(request|response)\.header\.(authorization|proxy-authorization|cookie|set-cookie)$/i;

/**
 * Rewrites the URL attributes of every span as it ends, before any exporter sees it: the tokens
 * of mailed links (`?token=`), OAuth codes and reset paths are replaced as in the access log,
 * whichever instrumentation recorded them (incoming and outgoing node:http, fetch). Until the
 * redactor is given, URLs are replaced whole.
 */
export class RedactingSpanProcessor implements SpanProcessor {
  private redact: UrlRedactor | undefined;

  use(redactor: UrlRedactor): void {
    this.redact = redactor;
  }

  onStart(_span: Span, _parentContext: Context): void {}

  onEnding(span: Span): void {
    const attributes = span.attributes;
    for (const key of URL_ATTRIBUTES) {
      const value = attributes[key];
      if (typeof value === "string") span.setAttribute(key, this.redact?.(value) ?? REDACTED);
    }
    for (const key of QUERY_ATTRIBUTES) {
      const value = attributes[key];
      if (typeof value !== "string") continue;
      const marked = value.startsWith("?");
      const redacted = this.redact?.(marked ? value : `?${value}`);
      span.setAttribute(key, redacted === undefined ? REDACTED : marked ? redacted : redacted.slice(1));
    }
    for (const key of Object.keys(attributes)) if (CREDENTIAL_HEADER.test(key)) span.setAttribute(key, REDACTED);
  }

  onEnd(_span: ReadableSpan): void {}

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
