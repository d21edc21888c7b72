import type { CaughtMail } from "./catcher.js";

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);

/** The JSON view of received mail, newest first (what tests and scripts read). */
export function mailboxJson(messages: CaughtMail[]) {
  return {
    messages: [...messages].reverse().map((m) => ({
      id: m.id,
      from: m.from,
      to: m.to,
      subject: m.subject,
      receivedAt: m.receivedAt.toISOString(),
      text: m.text,
      links: m.links,
    })),
  };
}

/**
 * The development mailbox page at `{base_url}/dev/mail`: every received message, newest first,
 * with its text body and its links clickable. The text body is shown, never the HTML one, so a
 * message cannot run script on the page; every value is escaped. Long links and words break where
 * the line ends (overflow-wrap), so a reset link does not widen the page past a phone's screen.
 */
export function mailboxHtml(messages: CaughtMail[]): string {
  const items = [...messages]
    .reverse()
    .map((m) => {
      const body = escapeHtml(m.text).replace(/https?:\/\/(?:[^\s<>&]|&amp;)+/g, (url) => `<a href="${url}">${url}</a>`);
      return `<article><h2>${escapeHtml(m.subject)}</h2><p class="meta">to ${escapeHtml(m.to.join(", "))} · from ${escapeHtml(m.from)} · ${m.receivedAt.toISOString()}</p><pre>${body}</pre></article>`;
    })
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Development mailbox</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:15px system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;overflow-wrap:anywhere}article{border:1px solid #ccc;border-radius:6px;padding:0 1rem;margin:1rem 0}.meta{color:#555;font-size:13px}pre{white-space:pre-wrap}</style>
</head><body><h1>Development mailbox</h1><p>Mail sent by this stack in development (${messages.length}). Reload to see new mail.</p>
${items || "<p>No mail yet.</p>"}
</body></html>`;
}

/** A rendered view: what an HTTP handler writes. */
export interface RenderedMailbox {
  contentType: string;
  body: string;
}

/**
 * The mailbox as JSON when the client asks for it (`Accept: application/json` or `?format=json`),
 * else as the HTML page. Framework-free, so the gateway mounts it with any router.
 */
export function renderMailbox(
  messages: CaughtMail[],
  request: { accept?: string | undefined; format?: string | undefined } = {},
): RenderedMailbox {
  const json = request.format === "json" || (request.accept ?? "").includes("application/json");
  return json
    ? { contentType: "application/json; charset=utf-8", body: JSON.stringify(mailboxJson(messages)) }
    : { contentType: "text/html; charset=utf-8", body: mailboxHtml(messages) };
}
