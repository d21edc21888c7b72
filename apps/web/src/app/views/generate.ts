import type { View } from "../context.js";
import { field, h } from "../dom.js";

/** Streams a text generation (SSE over fetch): deltas appear as they arrive, then the outcome. */
export const generateView: View = (ctx, root) => {
  const output = h("pre", { id: "generate-output", class: "output" });
  const outcome = h("p", { id: "generate-status", class: "muted", "data-state": "idle" });
  const button = h("button", { type: "submit" }, "Generate");
  const stop = h("button", { type: "button", hidden: true }, "Stop");
  let controller: AbortController | undefined;

  const run = async (prompt: string) => {
    controller = new AbortController();
    output.textContent = "";
    outcome.dataset.state = "streaming";
    outcome.textContent = "streaming…";
    for await (const event of ctx.client.generate({ prompt }, controller.signal)) {
      if (event.type === "delta") output.textContent += event.text;
      else if (event.type === "done") {
        outcome.dataset.state = "done";
        outcome.textContent = `done (provider ${event.provider}, ${event.finishReason})`;
      } else {
        outcome.dataset.state = "error";
        outcome.textContent = `failed: ${event.code}: ${event.message}`;
      }
    }
  };
  const form = h(
    "form",
    { id: "generate-form", class: "card" },
    h("textarea", { name: "prompt", required: true, rows: 3, placeholder: "Prompt" }),
    h("div", { class: "inline" }, button, stop),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    button.disabled = true;
    stop.hidden = false;
    run(field(form, "prompt"))
      .catch((e: unknown) => {
        outcome.dataset.state = "error";
        outcome.textContent = "failed";
        if (!controller?.signal.aborted) ctx.showError(e);
      })
      .finally(() => {
        button.disabled = false;
        stop.hidden = true;
      });
  });
  stop.addEventListener("click", () => controller?.abort());
  root.append(h("h1", {}, "Generate text"), form, outcome, output);
  return () => controller?.abort();
};
