import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import nodemailer, { type Transporter } from "nodemailer";

/**
 * The span of each send, when the service traces (packages/telemetry starts the SDK); without
 * the SDK every call on it is a no-op. There is no OpenTelemetry instrumentation of nodemailer.
 */
const tracer = trace.getTracer("@app/mailer");

/** One outgoing message: both bodies are always sent (plain text for every client, HTML for most). */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** How outgoing mail is sent. */
export interface MailerSettings {
  /** `smtp://user:pass@host:port` or `smtps://…` (implicit TLS); credentials ride in the URL. */
  smtpUrl: string;
  /** The From header, e.g. `Accounts <no-reply@example.com>`. */
  from: string;
  /** Longest wait for the connection, the greeting and each socket read (default 10 s). */
  timeoutMs?: number;
}

/** Sends mail; {@link MailUnavailableError} when the SMTP server cannot take it. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): void;
}

/**
 * The SMTP server refused the message or could not be reached. The caller decides what happens
 * (identity's outbox tries the mail again later: docs/accounts.md "Mail").
 */
export class MailUnavailableError extends Error {
  readonly code = "mail_unavailable";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "MailUnavailableError";
  }
}

/** True for a {@link MailUnavailableError} (also across duplicated module instances). */
export function isMailUnavailable(error: unknown): error is MailUnavailableError {
  return error instanceof MailUnavailableError || (error as { name?: unknown } | null)?.name === "MailUnavailableError";
}

/** Refuses a URL nodemailer would misread, with a message fit for a start-up error. */
export function checkSmtpUrl(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "SMTP_URL is not a URL (expected smtp://user:pass@host:port or smtps://…)";
  }
  if (parsed.protocol !== "smtp:" && parsed.protocol !== "smtps:") return "SMTP_URL must start with smtp:// or smtps://";
  if (!parsed.hostname) return "SMTP_URL has no host";
  return undefined;
}

/**
 * A nodemailer SMTP transport (pooled connections) for `settings.smtpUrl`. A send that fails for
 * any reason (refused connection, timeout, 4xx/5xx reply) rejects with {@link MailUnavailableError};
 * the message never says more than the SMTP reply code, so credentials in the URL stay out of logs.
 * Each send is a client span `mail send` naming the server only: no address, subject or body,
 * which may carry a code or a link.
 */
export function createMailer(settings: MailerSettings): Mailer {
  const problem = checkSmtpUrl(settings.smtpUrl);
  if (problem) throw new Error(problem);
  const timeout = settings.timeoutMs ?? 10_000;
  const server = new URL(settings.smtpUrl);
  const attributes = {
    "network.protocol.name": "smtp",
    "server.address": server.hostname,
    "server.port": Number(server.port || (server.protocol === "smtps:" ? 465 : 25)),
  };
  // nodemailer reads host, port, TLS (smtps:) and credentials from `url`.
  const transport: Transporter = nodemailer.createTransport({
    url: settings.smtpUrl,
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
  } as Parameters<typeof nodemailer.createTransport>[0]);
  return {
    send(message) {
      return tracer.startActiveSpan("mail send", { kind: SpanKind.CLIENT, attributes }, async (span) => {
        try {
          await transport.sendMail({ from: settings.from, ...message });
        } catch (error) {
          const code = (error as { responseCode?: unknown; code?: unknown }).responseCode ?? (error as { code?: unknown }).code;
          const failure = new MailUnavailableError(`mail could not be sent (${String(code ?? "unknown error")})`, { cause: error });
          span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
          throw failure;
        } finally {
          span.end();
        }
      });
    },
    close() {
      transport.close();
    },
  };
}
