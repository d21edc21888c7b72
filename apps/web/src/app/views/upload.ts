import type { UploadView } from "@app/contracts";
import type { View } from "../context.js";
import { files, formatBytes, h } from "../dom.js";

function uploadRow(upload: UploadView): HTMLElement {
  return h(
    "tr",
    { "data-upload-id": upload.id },
    h("td", {}, upload.filename),
    h("td", {}, upload.contentType),
    h("td", {}, formatBytes(upload.size)),
    h("td", { class: "mono" }, upload.sha256.slice(0, 16)),
  );
}

/** Uploads a file as multipart/form-data (field `file`) and lists what this page uploaded. */
export const uploadView: View = (ctx, root) => {
  const rows = h("tbody", { id: "uploads" });
  const button = h("button", { type: "submit" }, "Upload");
  const form = h(
    "form",
    { id: "upload-form", class: "card inline wrap", "aria-label": "Upload a file" },
    h("input", { type: "file", name: "file", required: true, "aria-label": "File to upload" }),
    button,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const [file] = files(form, "file");
    if (!file) return;
    button.disabled = true;
    ctx.client.uploads
      .create({ blob: file, filename: file.name })
      .then((upload) => {
        rows.prepend(uploadRow(upload));
        form.reset();
      })
      .catch((e: unknown) => ctx.showError(e))
      .finally(() => {
        button.disabled = false;
      });
  });
  const table = h(
    "table",
    { class: "table" },
    h("thead", {}, h("tr", {}, h("th", {}, "File"), h("th", {}, "Type"), h("th", {}, "Size"), h("th", {}, "SHA-256"))),
    rows,
  );
  root.append(
    h("h1", {}, "Upload a file"),
    h("p", { class: "muted" }, "Images, PDF, text, CSV or JSON, up to the service's size limit."),
    form,
    h("div", { class: "scroll-x", tabindex: 0, role: "region", "aria-label": "Uploaded files" }, table),
  );
  return undefined;
};
