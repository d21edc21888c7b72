import { generateBody } from "@app/contracts";
import { type AnyRoute, defineRoute, type Guard, toAppError } from "@app/http-kit";
import type { Logger } from "pino";
import { jsonBody } from "../entry/body.js";
import { requireAuth, streamAuth } from "../entry/stream-auth.js";
import type { SseHub } from "../events/sse.js";
import { tokenExpiry } from "../lib/expiry.js";
import { releaseOnClose, type UserCaps } from "../lib/user-caps.js";
import type { GenerateChunk, TextProvider } from "./text-providers.js";

/** Default output bound when the body names none. */
export const DEFAULT_MAX_TOKENS = 512;

/**
 * POST /api/generate/stream: SSE text generation (`delta` events, then `done` or `error`) from the
 * configured provider. The first chunk is awaited before the stream opens, so an unreachable
 * provider is a JSON 503; the provider is aborted as soon as the client disconnects, also while
 * that first chunk is still awaited. The stream ends when the bearer token expires. A user runs at
 * most MAX_GENERATIONS_PER_USER generations at once (429 beyond).
 */
export function generateRoutes(bearer: Guard, deps: { provider: TextProvider; sse: SseHub; logger: Logger; caps: UserCaps }): AnyRoute[] {
  const route = defineRoute({
    method: "post",
    path: "/api/generate/stream",
    tag: "generate",
    summary: "Stream generated text as SSE: event delta {text}..., then done {provider, finishReason} or error {code, message}",
    body: generateBody,
    reply: { raw: "text/event-stream" },
    guards: [bearer, streamAuth, jsonBody],
    handler: async ({ req, res, body }) => {
      const auth = requireAuth(req);
      // One slot per generation in progress, returned when the response closes (every path).
      const lease = await deps.caps.acquire("generations", auth.userId);
      releaseOnClose(res, lease);
      const controller = new AbortController();
      // The response's "close" is the client leaving (or the stream ending): stop the provider.
      const abort = () => controller.abort();
      res.on("close", abort);
      const input = { prompt: body.prompt, system: body.system, maxTokens: body.maxTokens ?? DEFAULT_MAX_TOKENS };
      const chunks = deps.provider.generate(input, controller.signal)[Symbol.asyncIterator]();
      let next: IteratorResult<GenerateChunk>;
      try {
        next = await chunks.next();
      } catch (error) {
        // The client left while the first chunk was awaited: nobody to answer.
        if (controller.signal.aborted) return;
        throw error;
      }
      const stream = deps.sse.open(res, { expiresAt: tokenExpiry(auth.claims), userId: auth.userId });
      stream.onClose(abort);
      try {
        while (!next.done && !stream.closed) {
          const chunk = next.value;
          if (chunk.type === "delta") stream.send({ event: "delta", data: { text: chunk.text } });
          else stream.send({ event: "done", data: { provider: deps.provider.name, finishReason: chunk.finishReason } });
          next = await chunks.next();
        }
      } catch (error) {
        if (!controller.signal.aborted) {
          const appError = toAppError(error);
          deps.logger.warn({ err: (error as Error).message }, "generation failed mid-stream");
          stream.send({ event: "error", data: { code: appError.code, message: appError.expose ? appError.message : "generation failed" } });
        }
      } finally {
        await chunks.return?.();
        stream.close();
      }
    },
  });
  return [route];
}
