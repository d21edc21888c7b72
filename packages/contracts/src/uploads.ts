import { z } from "zod";
import { timestampSchema } from "./pagination.js";

/** Multipart field that carries the file of POST /api/uploads. */
export const UPLOAD_FILE_FIELD = "file";

/** An uploaded file's metadata (its bytes are at GET /api/uploads/:id). */
export const uploadSchema = z.object({
  id: z.string(),
  filename: z.string(),
  contentType: z.string(),
  size: z.number().int(),
  sha256: z.string(),
  createdAt: timestampSchema,
});
export type UploadView = z.infer<typeof uploadSchema>;
