import type { View } from "../context.js";
import { field, h } from "../dom.js";
import { formSummary, labelled, onSubmit } from "../forms.js";
import { sentenceFor } from "../messages.js";

/**
 * Streams a text generation (SSE over fetch): deltas appear as they arrive, then the outcome.
 * The provider's name arrives with the `done` event (the API reports it nowhere earlier), so
 * the line above the output names it after the first answer and keeps it for the next ones. A
 * refused prompt shows the service's sentence under the field, as every form does (forms.ts).
 */
export const generateView: View = (ctx, root) => {
  const output = h("pre", { id: "generate-output", class: "output", role: "region", "aria-label": "Generated text", tabindex: 0 });
  const outcome = h("p", { id: "generate-status", class: "muted", "data-state": "idle", "aria-live": "polite" });
  const provider = h("p", { id: "generate-provider", class: "muted" }, "Answers come from the service's configured text provider.");
  const stop = h("button", { type: "button", class: "secondary", hidden: true }, "Stop");
  let controller: AbortController | undefined;

  const run = async (prompt: string) => {
    controller = new AbortController();
    output.textContent = "";
    outcome.dataset.state = "streaming";
    outcome.textContent = "Writing…";
    for await (const event of ctx.client.generate({ prompt }, controller.signal)) {
      if (event.type === "delta") output.textContent += event.text;
      else if (event.type === "done") {
        outcome.dataset.state = "done";
        outcome.textContent = event.finishReason === "length" ? "Done (cut at the length limit)." : "Done.";
        provider.textContent = `Answered by the “${event.provider}” provider.`;
        provider.dataset.provider = event.provider;
      } else {
        outcome.dataset.state = "error";
        outcome.textContent = `Failed: ${sentenceFor(event.code)}`;
      }
    }
  };
  const form = h(
    "form",
    { id: "generate-form", class: "card", novalidate: true, "aria-label": "Generate text" },
    labelled("Prompt", h("textarea", { name: "prompt", rows: 3 })),
    h("div", { class: "inline" }, h("button", { type: "submit" }, "Generate"), stop),
    formSummary(),
  );
  onSubmit(form, async () => {
    stop.hidden = false;
    try {
      await run(field(form, "prompt"));
    } catch (error) {
      const stopped = controller?.signal.aborted ?? false;
      outcome.dataset.state = stopped ? "stopped" : "error";
      outcome.textContent = stopped ? "Stopped." : "";
      if (!stopped) throw error;
    } finally {
      stop.hidden = true;
    }
  });
  stop.addEventListener("click", () => controller?.abort());
  root.append(h("h1", {}, "Generate text"), provider, form, outcome, output);
  return () => controller?.abort();
};
