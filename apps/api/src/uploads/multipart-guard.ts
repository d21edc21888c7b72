import { type Guard, guard, parseOrThrow } from "@app/http-kit";
import type { Request } from "express";
import type { z } from "zod";
import type { FileStore } from "./file-store.js";
import { isMultipart, type MultipartLimits, type ReceivedFile, receiveMultipart } from "./multipart.js";

/** Options of {@link multipart}. */
export interface MultipartGuardOptions {
  store: FileStore;
  limits: MultipartLimits;
  /**
   * The body the route's schema validates, made from the text fields; checked here, so files of
   * a refused body are removed before the error answers.
   */
  body?: { schema: z.ZodType; from(fields: Record<string, string>): unknown };
  /** Runs before the first byte of a file is accepted (e.g. the task must be the caller's). */
  admit?(req: Request): Promise<void>;
  /** The body reader of a request that is not multipart (the JSON guard); without it, 415. */
  otherwise?: Guard;
}

const received = new WeakMap<Request, ReceivedFile[]>();

/** The files the multipart guard stored for this request; undefined when the body was not multipart. */
export function receivedFiles(req: Request): ReceivedFile[] | undefined {
  return received.get(req);
}

/**
 * The guard that reads a multipart/form-data body into the file store (multipart.ts: 413 over
 * the size limit, 415 for a disallowed type or a body that is not multipart), placed after
 * authentication. The handler takes the stored files with {@link receivedFiles} and removes them
 * when it fails.
 */
export function multipart(options: MultipartGuardOptions): Guard {
  const { store, limits, body, admit, otherwise } = options;
  const bodyTypes = ["multipart/form-data"];
  return guard(
    "multipart",
    async (req, res) => {
      if (otherwise && !isMultipart(req)) return otherwise.run(req, res);
      await admit?.(req);
      const { fields, files } = await receiveMultipart(req, store, limits);
      received.set(req, files);
      if (!body) return;
      try {
        req.body = parseOrThrow(body.schema, body.from(fields));
      } catch (error) {
        await store.remove(files.map((f) => f.id));
        throw error;
      }
    },
    { readsBody: true, bodyTypes },
  );
}
