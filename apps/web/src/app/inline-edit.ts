import { h } from "./dom.js";
import { formSummary, onSubmit } from "./forms.js";

/** Options of {@link editButton}. */
export interface EditOptions {
  /** Accessible name of the button, e.g. "Edit project Website"; it starts with the visible text. */
  label: string;
  /** The button's visible text (default "Edit"). */
  text?: string;
  /** The row the form opens under. */
  row: HTMLElement;
  /** Labelled fields holding the current values (see forms.ts `labelled`). */
  fields(): HTMLElement[];
  /** Sends the change and redraws what it shows; the form then closes (unless the row was replaced). */
  save(form: HTMLFormElement): Promise<void>;
}

/**
 * An "Edit" button that opens a small form inside its row; problems show next to the fields
 * like on every other form, "Cancel" closes it and gives the focus back to the button.
 */
export function editButton(options: EditOptions): HTMLButtonElement {
  const button = h(
    "button",
    { type: "button", class: "secondary small", "aria-label": options.label, "aria-expanded": "false" },
    options.text ?? "Edit",
  );
  button.addEventListener("click", () => {
    if (options.row.querySelector("form.edit")) return;
    const cancel = h("button", { type: "button", class: "secondary" }, "Cancel");
    const form = h(
      "form",
      { class: "edit", novalidate: true, "aria-label": options.label },
      ...options.fields(),
      h("div", { class: "inline" }, h("button", { type: "submit" }, "Save"), cancel),
      formSummary(),
    );
    const close = () => {
      form.remove();
      button.setAttribute("aria-expanded", "false");
      button.focus();
    };
    cancel.addEventListener("click", close);
    onSubmit(form, async () => {
      await options.save(form);
      if (form.isConnected) close();
    });
    options.row.append(form);
    button.setAttribute("aria-expanded", "true");
    form.querySelector<HTMLElement>("input, textarea, select")?.focus();
  });
  return button;
}
