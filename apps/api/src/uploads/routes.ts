import { pipeline } from "node:stream/promises";
import { idParams, pageQuery, UPLOAD_FILE_FIELD, uploadSchema } from "@app/contracts";
import { type AnyRoute, AppError, defineRoute, type Guard } from "@app/http-kit";
import { requireAuth, streamAuth } from "../entry/stream-auth.js";
import { pageResponse } from "../lib/pagination.js";
import { multipart, receivedFiles } from "./multipart-guard.js";
import type { UploadsService } from "./service.js";

const INLINE = /^(image\/(png|jpeg|gif|webp)|application\/pdf)$/;

function contentDisposition(type: string, filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, "_").replace(/[\\"]/g, "_");
  return `${INLINE.test(type) ? "inline" : "attachment"}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/**
 * POST /api/uploads (multipart, the file in field `file`; 413 over the size limit, 415 for a
 * disallowed type or a non-multipart body; raw 201 body), GET /api/uploads (the caller's own
 * uploads, newest first, paged like every list), GET /api/uploads/:id (the bytes, streamed to
 * their owner only) and DELETE /api/uploads/:id (the row and its bytes; 404 for anyone else's).
 */
export function uploadRoutes(
  bearer: Guard,
  deps: { uploads: UploadsService; limits: { maxFileBytes: number; allowedTypes: readonly string[] } },
): AnyRoute[] {
  const file = multipart({ store: deps.uploads.store, limits: { ...deps.limits, maxFiles: 1, fileField: UPLOAD_FILE_FIELD } });
  return [
    defineRoute({
      method: "post",
      path: "/api/uploads",
      tag: "uploads",
      summary: `Upload one file (multipart/form-data, field "${UPLOAD_FILE_FIELD}"). Raw 201 body; 413 too large, 415 type not allowed.`,
      status: 201,
      reply: "json",
      response: uploadSchema,
      guards: [bearer, file],
      handler: async ({ req }) => {
        const stored = receivedFiles(req)?.[0];
        if (!stored) {
          throw new AppError("validation_failed", `a file is required in field "${UPLOAD_FILE_FIELD}"`, {
            issues: [{ path: UPLOAD_FILE_FIELD, message: "file is required" }],
          });
        }
        return deps.uploads.create(requireAuth(req).userId, stored);
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/uploads",
      tag: "uploads",
      summary: "List your uploads (newest first; task message attachments are listed with their message)",
      paginated: true,
      query: pageQuery,
      response: uploadSchema.array(),
      guards: [bearer],
      handler: async (ctx) => pageResponse(await deps.uploads.list(requireAuth(ctx.req).userId, ctx.query), ctx),
    }),
    defineRoute({
      method: "delete",
      path: "/api/uploads/:id",
      tag: "uploads",
      summary: "Delete an upload and its bytes (your own uploads only; 404 otherwise)",
      params: idParams,
      status: 204,
      guards: [bearer],
      handler: (ctx) => deps.uploads.remove(requireAuth(ctx.req).userId, ctx.params.id),
    }),
    defineRoute({
      method: "get",
      path: "/api/uploads/:id",
      tag: "uploads",
      summary: "Download an upload (its owner only; 404 otherwise)",
      params: idParams,
      reply: { raw: "application/octet-stream" },
      guards: [bearer, streamAuth],
      handler: async ({ req, res, params }) => {
        const { upload, stream } = await deps.uploads.open(requireAuth(req).userId, params.id);
        res.status(200);
        res.setHeader("content-type", upload.contentType);
        res.setHeader("content-length", String(upload.size));
        res.setHeader("content-disposition", contentDisposition(upload.contentType, upload.filename));
        res.setHeader("x-content-type-options", "nosniff");
        res.setHeader("content-security-policy", "default-src 'none'; sandbox");
        res.setHeader("cache-control", "private, max-age=0, must-revalidate");
        res.setHeader("etag", `"${upload.sha256}"`);
        // pipeline destroys the file stream when the client goes away (pipe() would leak the fd).
        pipeline(stream, res).catch(() => undefined);
      },
    }),
  ];
}
