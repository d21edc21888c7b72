import { z } from "zod";

/** Body of POST /api/generate/stream. */
export const generateBody = z.strictObject({
  prompt: z.string({ error: "prompt is required" }).min(1, "prompt is required").max(50_000, "prompt is too long"),
  system: z.string().max(20_000, "system is too long").optional(),
  maxTokens: z.number().int().min(1).max(4_096).optional(),
});
export type GenerateBody = z.infer<typeof generateBody>;

/**
 * SSE events of POST /api/generate/stream: `delta` (`{ text }`) any number of times, then exactly one
 * of `done` (`{ provider, finishReason }`) or `error` (`{ code, message }`).
 */
export const generateDeltaEvent = z.object({ text: z.string() });
export const generateDoneEvent = z.object({ provider: z.string(), finishReason: z.enum(["stop", "length"]) });
export const generateErrorEvent = z.object({ code: z.string(), message: z.string() });
