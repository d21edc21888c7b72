import { pipeline } from "node:stream/promises";
import { idParams, pageQuery, UPLOAD_FILE_FIELD, uploadSchema } from "@app/contracts";
import { AppError, parseOrThrow } from "@app/http-kit";
import type { Authenticate } from "../entry/authenticate.js";
import { requireAuth, streamAuth } from "../entry/stream-auth.js";
import { receiveMultipart } from "../lib/multipart.js";
import { pageResponse } from "../lib/pagination.js";
import type { ApiRoutes } from "../lib/registry.js";
import type { UploadsService } from "../services/uploads.js";

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
  api: ApiRoutes,
  deps: { uploads: UploadsService; authenticate: Authenticate; limits: { maxFileBytes: number; allowedTypes: readonly string[] } },
): void {
  const auth = streamAuth(deps.authenticate);
  api.raw(
    {
      method: "post",
      path: "/api/uploads",
      tag: "uploads",
      summary: `Upload one file (multipart/form-data, field "${UPLOAD_FILE_FIELD}"). Raw 201 body; 413 too large, 415 type not allowed.`,
      auth: "bearer",
      altBodyTypes: ["multipart/form-data"],
      status: 201,
      rawResponse: "application/json",
      response: uploadSchema,
    },
    auth,
    async (req, res) => {
      const { userId } = requireAuth(req);
      const { files } = await receiveMultipart(req, deps.uploads.store, { ...deps.limits, maxFiles: 1, fileField: UPLOAD_FILE_FIELD });
      const file = files[0];
      if (!file) {
        throw new AppError("validation_failed", `a file is required in field "${UPLOAD_FILE_FIELD}"`, {
          issues: [{ path: UPLOAD_FILE_FIELD, message: "file is required" }],
        });
      }
      res.status(201).json(await deps.uploads.create(userId, file));
    },
  );
  api.json(
    "get",
    "/api/uploads",
    {
      tag: "uploads",
      summary: "List your uploads (newest first; task message attachments are listed with their message)",
      paginated: true,
    },
    {
      auth: true,
      query: pageQuery,
      response: uploadSchema.array(),
      handler: async (ctx) => pageResponse(await deps.uploads.list(ctx.userId, ctx.query), ctx),
    },
  );
  api.json(
    "delete",
    "/api/uploads/:id",
    { tag: "uploads", summary: "Delete an upload and its bytes (your own uploads only; 404 otherwise)" },
    { auth: true, params: idParams, status: 204, handler: (ctx) => deps.uploads.remove(ctx.userId, ctx.params.id) },
  );
  api.raw(
    {
      method: "get",
      path: "/api/uploads/:id",
      tag: "uploads",
      summary: "Download an upload (its owner only; 404 otherwise)",
      auth: "bearer",
      params: idParams,
      status: 200,
      rawResponse: "application/octet-stream",
    },
    auth,
    async (req, res) => {
      const { userId } = requireAuth(req);
      const { id } = parseOrThrow(idParams, req.params, "params");
      const { upload, stream } = await deps.uploads.open(userId, id);
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
  );
}
