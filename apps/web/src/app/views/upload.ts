import { ApiError } from "@app/client";
import { UPLOAD_FILE_FIELD, type UploadView } from "@app/contracts";
import { deleteButton } from "../confirm.js";
import type { AppContext, View } from "../context.js";
import { files, formatBytes, h } from "../dom.js";
import { formSummary, labelled, onSubmit } from "../forms.js";
import { sentenceFor } from "../messages.js";
import { pagedList } from "../paged-list.js";

/** Saves an upload's bytes under its own name (the API answers them to their owner only). */
function download(ctx: AppContext, upload: UploadView): void {
  ctx.client.uploads
    .download(upload.id)
    .then((blob) => {
      const url = URL.createObjectURL(blob);
      h("a", { href: url, download: upload.filename }).click();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    })
    .catch((e: unknown) => ctx.showError(e));
}

/**
 * The problem with a chosen file as a field problem, so it shows under the field: no file is the
 * API's own `file is required` (apps/api/src/uploads/routes.ts answers it for a body without one,
 * which the client cannot send), and a refused size or type is the sentence for its code.
 */
function fileProblem(error: unknown): unknown {
  if (!(error instanceof ApiError) || (error.code !== "payload_too_large" && error.code !== "unsupported_media_type")) return error;
  return new ApiError(error.status, error.code, error.message, { issues: [{ path: UPLOAD_FILE_FIELD, message: sentenceFor(error.code) }] });
}

/** Uploads a file as multipart/form-data (field `file`); lists the user's uploads, each can be downloaded or deleted. */
export const uploadView: View = (ctx, root) => {
  const list = pagedList<UploadView>({
    id: "uploads",
    empty: "No files yet: upload one above.",
    load: (cursor) => ctx.client.uploads.list({ limit: 20, ...(cursor ? { cursor } : {}) }),
    row: (upload) =>
      h(
        "li",
        { class: "item upload", "data-id": upload.id, "data-upload-id": upload.id },
        h(
          "div",
          { class: "grow" },
          h("strong", { class: "filename" }, upload.filename),
          h(
            "p",
            { class: "muted" },
            `${upload.contentType} · ${formatBytes(upload.size)} · ${new Date(upload.createdAt).toLocaleString()} · SHA-256 `,
            h("span", { class: "mono sha" }, upload.sha256.slice(0, 16)),
          ),
        ),
        h(
          "div",
          { class: "inline" },
          h(
            "button",
            { type: "button", class: "secondary small", "aria-label": `Download ${upload.filename}`, onclick: () => download(ctx, upload) },
            "Download",
          ),
          deleteButton(
            `Delete ${upload.filename}`,
            `Delete the file “${upload.filename}”?`,
            async () => {
              await ctx.client.uploads.remove(upload.id);
              list.remove(upload.id);
              ctx.showNotice(`File “${upload.filename}” deleted.`);
            },
            (e) => ctx.showError(e),
          ),
        ),
      ),
  });
  const form = h(
    "form",
    { id: "upload-form", class: "card", novalidate: true, "aria-label": "Upload a file" },
    labelled("File", h("input", { type: "file", name: UPLOAD_FILE_FIELD }), {
      hint: "Images, PDF, text, CSV or JSON, up to the service's size limit.",
    }),
    h("div", { class: "inline" }, h("button", { type: "submit" }, "Upload")),
    formSummary(),
  );
  onSubmit(form, async () => {
    const [file] = files(form, UPLOAD_FILE_FIELD);
    if (!file) {
      throw new ApiError(400, "validation_failed", "a file is required", {
        issues: [{ path: UPLOAD_FILE_FIELD, message: "file is required" }],
      });
    }
    const upload = await ctx.client.uploads.create({ blob: file, filename: file.name }).catch((e: unknown) => {
      throw fileProblem(e);
    });
    form.reset();
    list.prepend(upload);
  });
  root.append(h("h1", {}, "Upload a file"), form, h("h2", {}, "Your files"), list.element);
  void list.reload();
  return list.stop;
};
