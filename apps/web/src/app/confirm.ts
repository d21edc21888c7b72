import { h } from "./dom.js";

/**
 * Asks before something that cannot be undone, in a modal `<dialog>` (focus is trapped inside,
 * Escape cancels, focus returns to where it was). "Cancel" has the focus, so Enter does not delete.
 */
export function confirmAction(question: string, action = "Delete"): Promise<boolean> {
  const previous = document.activeElement as HTMLElement | null;
  return new Promise((resolve) => {
    const title = h("h2", { id: "confirm-title" }, question);
    const cancel = h("button", { type: "button", class: "secondary", id: "confirm-cancel" }, "Cancel");
    const ok = h("button", { type: "button", class: "danger", id: "confirm-ok" }, action);
    const dialog = h(
      "dialog",
      { id: "confirm-dialog", "aria-labelledby": "confirm-title", class: "dialog" },
      title,
      h("p", { class: "muted" }, "This cannot be undone."),
      h("div", { class: "inline" }, cancel, ok),
    );
    const finish = (answer: boolean) => {
      dialog.close();
      dialog.remove();
      previous?.focus();
      resolve(answer);
    };
    cancel.addEventListener("click", () => finish(false));
    ok.addEventListener("click", () => finish(true));
    dialog.addEventListener("cancel", (event) => {
      event.preventDefault();
      finish(false);
    });
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus();
  });
}

/**
 * A delete button that asks first (see {@link confirmAction}) and runs `remove` only on "Delete";
 * a failure goes to the page's alert area.
 */
export function deleteButton(
  label: string,
  question: string,
  remove: () => Promise<void>,
  onError: (e: unknown) => void,
): HTMLButtonElement {
  const button = h("button", { type: "button", class: "danger small", "aria-label": label }, "Delete");
  button.addEventListener("click", () => {
    void confirmAction(question).then((yes) => {
      if (!yes) return;
      button.disabled = true;
      remove()
        .catch(onError)
        .finally(() => {
          button.disabled = false;
        });
    });
  });
  return button;
}
