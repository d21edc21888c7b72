import { createHash } from "node:crypto";
import { createWriteStream, type WriteStream } from "node:fs";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { AppError } from "@app/http-kit";
// busboy: a streaming multipart parser with hard limits (file size, file count, field size) that
// writes nothing to disk itself. Files are streamed straight to their final place with a running
// size check and hash, so a 10 MiB limit never means 10 MiB in memory, and an oversize file is cut
// at the limit (413) and deleted. multer/formidable buffer or use temp dirs and add surface we do not need.
import busboy from "busboy";
import type { Request } from "express";
import { newId } from "../lib/ids.js";
import type { FileStore } from "./file-store.js";

/** Limits of one multipart request. */
export interface MultipartLimits {
  maxFileBytes: number;
  maxFiles: number;
  /** Accepted content types; `type/*` matches a whole family. */
  allowedTypes: readonly string[];
  /** When set, files are only accepted in this field (400 otherwise). */
  fileField?: string;
  /** Largest text field (default 64 KiB). */
  maxFieldBytes?: number;
}

/** A file received and written to the store. */
export interface ReceivedFile {
  id: string;
  field: string;
  filename: string;
  contentType: string;
  size: number;
  sha256: string;
}

/** Text fields and stored files of a multipart request. */
export interface MultipartResult {
  fields: Record<string, string>;
  files: ReceivedFile[];
}

/** True when `type` is allowed by the list (exact or `family/*`). */
export function isAllowedType(type: string, allowed: readonly string[]): boolean {
  const t = type.toLowerCase();
  return allowed.some((a) => a === t || (a.endsWith("/*") && t.startsWith(a.slice(0, -1))));
}

/**
 * Bidirectional formatting characters (embeddings, overrides, isolates, marks): in a file name
 * they make `evil\u202Etxt.exe` display as `evilexe.txt`, so names holding them are refused.
 */
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/u;
/**
 * Invisible format characters (Unicode category Cf): zero-width space, joiners and non-joiners,
 * word joiner, U+FEFF, soft hyphen, tag characters. They make two names that look the same
 * differ (`invoice\u200B.pdf`), or carry hidden text, so names holding them are refused like
 * control characters; this includes the joiners of emoji sequences and of Persian or Indic text.
 */
const INVISIBLE_FORMAT = /\p{Cf}/u;
/** Control characters (C0, DEL, C1) and lone surrogates: never part of a real file name. */
const CONTROL_CHARS = /[\p{Cc}\p{Cs}]/u;

/** Why a client-supplied file name is refused, or undefined when it is acceptable. */
export function filenameProblem(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  if (BIDI_CONTROLS.test(name)) return "file name contains a bidirectional control character";
  if (INVISIBLE_FORMAT.test(name)) return "file name contains an invisible format character (such as a zero-width space)";
  if (CONTROL_CHARS.test(name)) return "file name contains a control character";
  return undefined;
}

/** A safe display name: no path, no control characters, bounded length. */
export function safeFilename(name: string | undefined): string {
  const base = (name ?? "").split(/[\\/]/).pop() ?? "";
  const cleaned = Array.from(base)
    .filter((ch) => ch !== '"' && (ch.codePointAt(0) ?? 0) >= 0x20 && ch !== "\u007f")
    .join("")
    .trim();
  return cleaned.slice(0, 255) || "file";
}

/** True when the request carries multipart/form-data. */
export function isMultipart(req: Request): boolean {
  return Boolean(req.is("multipart/form-data"));
}

/** Time the client has to send the rest of a refused body before the answer goes out anyway. */
const DRAIN_MS = 5_000;

/**
 * Reads and discards the rest of a refused request body, then resolves: when it ended, or at
 * `maxMs` (then the answer carries `connection: close` and the rest is never read). Answering
 * before the body is read makes the connection close (or reset) under a sender still writing:
 * the gateway asks for `connection: close` (apps/gateway/src/gateway.ts), so Node closes the
 * socket right after the answer, with the rest of the body unread, and the sender sees EPIPE
 * instead of the answer. Discarded bytes take no memory; the time bound keeps a slow or endless
 * body from holding the connection.
 */
function drainRest(req: Request, maxMs: number): Promise<void> {
  if (req.complete || req.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      if (req.res && !req.res.headersSent) req.res.setHeader("connection", "close");
      resolve();
    }, maxMs);
    const ended = () => {
      clearTimeout(timer);
      resolve();
    };
    req.once("end", ended);
    req.once("close", ended);
    req.resume();
  });
}

/**
 * Streams a multipart/form-data body: each file goes straight to the store (hash and size counted
 * on the way). 415 for a non-multipart request or a disallowed file type, 413 for a file over the
 * limit or too many files or fields, 400 for a malformed body. On any failure every file written
 * by this request, partial ones included, is deleted before the error is thrown.
 */
export function receiveMultipart(req: Request, store: FileStore, limits: MultipartLimits): Promise<MultipartResult> {
  if (!isMultipart(req)) return Promise.reject(new AppError("unsupported_media_type", "request body must be multipart/form-data"));
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      // RFC 7578 §4.2: a `filename` parameter is UTF-8 (busboy's default is latin1, which turns
      // `résumé.txt` into `rÃ©sumÃ©.txt`).
      defParamCharset: "utf8",
      limits: {
        fileSize: limits.maxFileBytes,
        files: limits.maxFiles,
        fields: 20,
        fieldSize: limits.maxFieldBytes ?? 64 * 1024,
        parts: limits.maxFiles + 20,
      },
    });
  } catch (cause) {
    return Promise.reject(new AppError("bad_request", "malformed multipart/form-data request", { cause }));
  }
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = {};
    const files: ReceivedFile[] = [];
    const written: string[] = [];
    const pending: Promise<void>[] = [];
    // Files being written; on failure each is cut off and its promise settled by hand (a destroyed
    // busboy file stream does not always settle its pipeline).
    const active = new Map<Readable, { out: WriteStream; settle: () => void }>();
    let failed = false;

    const fail = (error: AppError) => {
      if (failed) return;
      failed = true;
      req.unpipe(parser);
      const drained = drainRest(req, DRAIN_MS);
      const closing: Promise<void>[] = [];
      for (const [source, { out, settle }] of active) {
        source.unpipe(out);
        source.resume();
        // A write stream destroyed before its open() finished still creates the file: wait for
        // 'close' before removing, or the partial file reappears after the 413.
        if (!out.closed) closing.push(new Promise((r) => out.once("close", () => r())));
        out.destroy();
        settle();
      }
      active.clear();
      void Promise.allSettled([...pending, ...closing, drained])
        .then(() => store.remove(written))
        .finally(() => reject(error));
    };

    parser.on("file", (field, stream, info) => {
      if (failed) {
        stream.resume();
        return;
      }
      if (limits.fileField && field !== limits.fileField) {
        stream.resume();
        return fail(
          new AppError("validation_failed", `unexpected file field "${field}"`, { issues: [{ path: field, message: "unexpected file" }] }),
        );
      }
      const nameProblem = filenameProblem(info.filename);
      if (nameProblem) {
        stream.resume();
        return fail(new AppError("validation_failed", nameProblem, { issues: [{ path: field, message: nameProblem }] }));
      }
      const contentType = info.mimeType.toLowerCase();
      if (!isAllowedType(contentType, limits.allowedTypes)) {
        stream.resume();
        return fail(new AppError("unsupported_media_type", `file type ${contentType} is not allowed`));
      }
      const id = newId();
      const hash = createHash("sha256");
      let size = 0;
      let truncated = false;
      written.push(id);
      // Written as `<id>.<instance>.partial` and renamed when complete: a file cut off by a crash
      // or a shutdown keeps the suffix and is swept once its instance is gone (file-store.ts).
      const out = createWriteStream(store.begin(id), { flags: "wx" });
      let settle = () => {};
      const done = new Promise<void>((resolve) => {
        settle = resolve;
      });
      active.set(stream, { out, settle });
      stream.on("data", (chunk: Buffer) => {
        size += chunk.length;
        hash.update(chunk);
      });
      stream.on("limit", () => {
        truncated = true;
        fail(new AppError("payload_too_large", `file is larger than ${limits.maxFileBytes} bytes`));
      });
      pipeline(stream, out)
        .then(async () => {
          if (truncated || failed) return;
          await store.commit(id);
          // fail() may have swept this request's files while the rename ran.
          if (failed) await store.remove([id]);
        })
        .then(
          () => {
            active.delete(stream);
            if (!truncated && !failed) {
              files.push({ id, field, filename: safeFilename(info.filename), contentType, size, sha256: hash.digest("hex") });
            }
            settle();
          },
          (cause: unknown) => {
            active.delete(stream);
            fail(new AppError("bad_request", "upload was interrupted", { cause }));
            settle();
          },
        );
      pending.push(done);
    });
    parser.on("field", (name, value, info) => {
      if (info.valueTruncated) return fail(new AppError("payload_too_large", `field "${name}" is too large`));
      fields[name] = value;
    });
    parser.on("filesLimit", () => fail(new AppError("payload_too_large", `at most ${limits.maxFiles} files are accepted`)));
    parser.on("fieldsLimit", () => fail(new AppError("payload_too_large", "too many fields")));
    parser.on("partsLimit", () => fail(new AppError("payload_too_large", "too many parts")));
    parser.on("error", (cause: unknown) => fail(new AppError("bad_request", "malformed multipart/form-data body", { cause })));
    parser.on("close", () => {
      void Promise.all(pending).then(() => {
        if (!failed) resolve({ fields, files });
      });
    });
    req.on("aborted", () => fail(new AppError("bad_request", "request was aborted")));
    req.pipe(parser);
  });
}
