import { ApiError } from "@app/client";
import { h } from "./dom.js";
import { describeError, issueSentence } from "./messages.js";
import { reportSessionEnd } from "./session.js";

let counter = 0;

/** Options of {@link labelled}. */
export interface FieldOptions {
  /** Shown under the control (and linked with aria-describedby). */
  hint?: string;
}

/**
 * A labelled control with a slot for its problem: `<label for>` names it for assistive tech, and
 * the slot (`data-issue-for="<name>"`) is linked through aria-describedby so a problem shown by
 * {@link showIssues} is read with the field.
 */
export function labelled(
  label: string,
  control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement,
  options: FieldOptions = {},
): HTMLElement {
  counter += 1;
  const id = control.id || `field-${counter}`;
  control.id = id;
  const name = control.getAttribute("name") ?? id;
  const issue = h("p", { class: "field-issue", id: `${id}-issue`, "data-issue-for": name });
  const hint = options.hint ? h("p", { class: "hint muted", id: `${id}-hint` }, options.hint) : null;
  control.setAttribute("aria-describedby", [hint?.id, issue.id].filter(Boolean).join(" "));
  return h("div", { class: "field" }, h("label", { for: id }, label), control, hint, issue);
}

/** Removes the problems shown on a form. */
export function clearIssues(form: HTMLElement): void {
  for (const slot of form.querySelectorAll<HTMLElement>("[data-issue-for]")) slot.textContent = "";
  for (const control of form.querySelectorAll("[aria-invalid]")) control.removeAttribute("aria-invalid");
  const summary = form.querySelector<HTMLElement>(".form-error");
  if (summary) summary.textContent = "";
}

/**
 * Shows a refused request on its form: each of the service's field `issues` as a sentence next
 * to its field (focus goes to the first such field in document order, whatever order the service
 * listed them in), and one plain sentence in the form's summary line for the rest. Codes never
 * appear. A refusal that ends the session opens the signed-out page instead (session.ts).
 */
export function showIssues(form: HTMLElement, error: unknown, overrides: Record<string, string> = {}): void {
  clearIssues(form);
  if (reportSessionEnd(error)) return;
  const summary = form.querySelector<HTMLElement>(".form-error");
  const leftovers: string[] = [];
  let hasFieldIssues = false;
  for (const issue of error instanceof ApiError ? error.issues : []) {
    const top = issue.path.split(".")[0] ?? "";
    const slot =
      form.querySelector<HTMLElement>(`[data-issue-for="${CSS.escape(issue.path)}"]`) ??
      form.querySelector<HTMLElement>(`[data-issue-for="${CSS.escape(top)}"]`);
    const sentence = issueSentence(issue);
    if (!slot) {
      leftovers.push(sentence);
      continue;
    }
    slot.textContent = slot.textContent ? `${slot.textContent}; ${sentence}` : sentence;
    const control = form.querySelector<HTMLElement>(`[aria-describedby~="${CSS.escape(slot.id)}"]`);
    control?.setAttribute("aria-invalid", "true");
    hasFieldIssues ||= control !== null;
  }
  const override = error instanceof ApiError ? overrides[error.code] : undefined;
  const text = leftovers.length ? leftovers.join("; ") : hasFieldIssues ? "" : (override ?? describeError(error));
  if (summary) summary.textContent = hasFieldIssues && !leftovers.length ? "Check the highlighted fields." : text;
  form.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
}

/** The summary line of a form (role=alert, so it is announced). */
export function formSummary(): HTMLElement {
  return h("p", { class: "form-error", role: "alert" });
}

/**
 * Wires a form's submit: disables the submit button while `run` works, clears old problems, and
 * shows a failure on the form itself (see {@link showIssues}; `overrides` are this form's own
 * sentences for some codes).
 */
export function onSubmit(form: HTMLFormElement, run: () => Promise<void>, overrides: Record<string, string> = {}): void {
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const buttons = [...form.querySelectorAll<HTMLButtonElement>("button[type=submit]")];
    for (const b of buttons) b.disabled = true;
    clearIssues(form);
    run()
      .catch((error: unknown) => showIssues(form, error, overrides))
      .finally(() => {
        for (const b of buttons) b.disabled = false;
      });
  });
}
