/** One Server-Sent Event as dispatched by the parser. */
export interface SseEvent {
  /** The `event:` field; `message` when the block named none. */
  event: string;
  /** The `data:` lines joined with newlines. */
  data: string;
  /** The `id:` field of this block, when it had one. */
  id?: string;
  /** The `retry:` reconnection delay in ms, when the block had one. */
  retry?: number;
}

/**
 * An incremental `text/event-stream` parser (the WHATWG rules: CRLF, LF or CR line ends, `:`
 * comments, one optional space after the colon, dispatch on a blank line, blocks without data
 * are not dispatched except for their `retry`/`id`).
 */
export class SseParser {
  #buffer = "";
  #started = false;
  #pendingCr = false;
  #event = "";
  #data: string[] = [];
  #id: string | undefined;
  #retry: number | undefined;

  /** Feeds a decoded chunk; returns the events it completed. */
  push(chunk: string): SseEvent[] {
    let text = chunk;
    if (!this.#started && text.length) {
      this.#started = true;
      if (text.startsWith("\uFEFF")) text = text.slice(1);
    }
    if (this.#pendingCr && text.startsWith("\n")) text = text.slice(1);
    this.#pendingCr = false;
    this.#buffer += text;
    const events: SseEvent[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.#buffer);
      if (!match) break;
      // A CR at the very end may be the first half of a CRLF split across chunks.
      if (match[0] === "\r" && match.index === this.#buffer.length - 1) this.#pendingCr = true;
      const line = this.#buffer.slice(0, match.index);
      this.#buffer = this.#buffer.slice(match.index + match[0].length);
      const event = this.#line(line);
      if (event) events.push(event);
    }
    return events;
  }

  #line(line: string): SseEvent | undefined {
    if (line === "") return this.#dispatch();
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.#event = value;
    else if (field === "data") this.#data.push(value);
    else if (field === "id" && !value.includes("\u0000")) this.#id = value;
    else if (field === "retry" && /^\d+$/.test(value)) this.#retry = Number(value);
    return undefined;
  }

  #dispatch(): SseEvent | undefined {
    const event: SseEvent = { event: this.#event || "message", data: this.#data.join("\n") };
    if (this.#id !== undefined) event.id = this.#id;
    if (this.#retry !== undefined) event.retry = this.#retry;
    const hasData = this.#data.length > 0;
    this.#event = "";
    this.#data = [];
    this.#id = undefined;
    this.#retry = undefined;
    if (hasData) return event;
    return event.retry !== undefined || event.id !== undefined ? { ...event, event: "" } : undefined;
  }
}

/**
 * Reads an SSE response body (from `fetch`, which unlike EventSource can send an
 * Authorization header) and yields its events. Blocks without data come out with an empty
 * `event` name so callers can still follow their `id`/`retry`.
 */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
    yield* parser.push(`${decoder.decode()}`);
  } finally {
    await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
