import { AppError } from "@app/http-kit";

/** Input of one generation. */
export interface GenerateInput {
  prompt: string;
  system?: string | undefined;
  maxTokens: number;
}

/** One piece of streamed output, or the end. */
export type GenerateChunk = { type: "delta"; text: string } | { type: "done"; finishReason: "stop" | "length" };

/** A text generation backend. Implementations stream chunks and stop when `signal` aborts. */
export interface TextProvider {
  readonly name: string;
  generate(input: GenerateInput, signal: AbortSignal): AsyncIterable<GenerateChunk>;
}

/**
 * The default provider: deterministic and offline. It answers with a fixed transformation of the
 * prompt, one word per chunk, so clients and tests see real streaming without any model.
 */
export class LocalTextProvider implements TextProvider {
  readonly name = "local";

  constructor(private readonly delayMs = 0) {}

  async *generate(input: GenerateInput, signal: AbortSignal): AsyncIterable<GenerateChunk> {
    const words = `Local echo: ${input.prompt.trim().replace(/\s+/g, " ")}`.split(" ");
    const count = Math.min(words.length, input.maxTokens);
    for (let i = 0; i < count; i += 1) {
      if (signal.aborted) return;
      if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
      yield { type: "delta", text: i === 0 ? (words[i] ?? "") : ` ${words[i] ?? ""}` };
    }
    yield { type: "done", finishReason: count < words.length ? "length" : "stop" };
  }
}

/** Settings of {@link OpenAiCompatibleProvider}. */
export interface OpenAiSettings {
  baseUrl: string;
  apiKey: string | undefined;
  model: string;
  /** Longest wait for the answer's start and between two chunks (default 60 s); then 503 / an `error` event. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** Default of {@link OpenAiSettings.timeoutMs}. */
export const OPENAI_TIMEOUT_MS = 60_000;

interface ChatCompletionChunk {
  choices?: Array<{ delta?: { content?: string | null }; finish_reason?: string | null }>;
}

/** Longest single SSE event accepted from a provider (a chunk of generated text is far smaller). */
export const MAX_PROVIDER_EVENT_CHARS = 1024 * 1024;

/** Splits an SSE byte stream into `data:` payloads; an event longer than {@link MAX_PROVIDER_EVENT_CHARS} is a 503. */
async function* sseData(body: ReadableStream<Uint8Array>): AsyncIterable<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const bytes of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(bytes, { stream: true });
    let cut = buffer.search(/\r?\n\r?\n/);
    while (cut >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, "");
      const data = block
        .split(/\r?\n/)
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trimStart())
        .join("\n");
      if (data) yield data;
      cut = buffer.search(/\r?\n\r?\n/);
    }
    if (buffer.length > MAX_PROVIDER_EVENT_CHARS) throw new AppError("service_unavailable", "the text provider sent an oversized event");
  }
}

/**
 * Any OpenAI-compatible `POST {baseUrl}/chat/completions` with `stream: true` (OpenAI, vLLM,
 * llama.cpp server, Ollama's OpenAI endpoint...). Upstream failures become 503 before the stream
 * starts; the upstream request is aborted when the client goes away, and when the upstream stays
 * silent for `timeoutMs` (before answering or between two chunks). The base URL is set by the
 * operator, not by users, so it is not subject to the outbound URL policy.
 */
export class OpenAiCompatibleProvider implements TextProvider {
  readonly name = "openai-compatible";
  readonly #fetch: typeof fetch;

  constructor(private readonly settings: OpenAiSettings) {
    this.#fetch = settings.fetch ?? fetch;
  }

  async *generate(input: GenerateInput, signal: AbortSignal): AsyncIterable<GenerateChunk> {
    const messages = [...(input.system ? [{ role: "system", content: input.system }] : []), { role: "user", content: input.prompt }];
    const timeoutMs = this.settings.timeoutMs ?? OPENAI_TIMEOUT_MS;
    const idle = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const rearm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => idle.abort(new AppError("service_unavailable", "the text provider did not answer in time")), timeoutMs);
    };
    rearm();
    const upstream = AbortSignal.any([signal, idle.signal]);
    try {
      yield* this.#stream(messages, input.maxTokens, upstream, rearm);
    } catch (error) {
      if (idle.signal.aborted && !signal.aborted) throw idle.signal.reason;
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  async *#stream(
    messages: Array<{ role: string; content: string }>,
    maxTokens: number,
    signal: AbortSignal,
    onProgress: () => void,
  ): AsyncIterable<GenerateChunk> {
    let response: Response;
    try {
      response = await this.#fetch(`${this.settings.baseUrl}/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "text/event-stream",
          ...(this.settings.apiKey ? { authorization: `Bearer ${this.settings.apiKey}` } : {}),
        },
        body: JSON.stringify({ model: this.settings.model, messages, stream: true, max_tokens: maxTokens }),
        signal,
      });
    } catch (cause) {
      throw new AppError("service_unavailable", "the text provider could not be reached", { cause });
    }
    onProgress();
    if (!response.ok || !response.body) {
      await response.body?.cancel().catch(() => undefined);
      throw new AppError("service_unavailable", `the text provider answered ${response.status}`);
    }
    let finishReason: "stop" | "length" = "stop";
    for await (const data of sseData(response.body)) {
      onProgress();
      if (data === "[DONE]") break;
      let chunk: ChatCompletionChunk;
      try {
        chunk = JSON.parse(data) as ChatCompletionChunk;
      } catch {
        continue;
      }
      const choice = chunk.choices?.[0];
      const text = choice?.delta?.content;
      if (text) yield { type: "delta", text };
      if (choice?.finish_reason === "length") finishReason = "length";
    }
    yield { type: "done", finishReason };
  }
}
