import { PASSKEY_NAME_MAX_LENGTH, type PasskeyView } from "@app/contracts";
import { deleteButton } from "../confirm.js";
import type { AppContext } from "../context.js";
import { field, h } from "../dom.js";
import { formSummary, labelled, onSubmit } from "../forms.js";
import { editButton } from "../inline-edit.js";
import { pagedList } from "../paged-list.js";
import { addPasskey, passkeysSupported } from "../passkey.js";

/** A passkey's name as the list shows it (unnamed ones by their kind of device). */
export function passkeyLabel(passkey: Pick<PasskeyView, "name" | "deviceType">): string {
  if (passkey.name) return passkey.name;
  return passkey.deviceType === "multiDevice" ? "Synced passkey" : "Passkey on one device";
}

const nameInput = (value = "") =>
  h("input", { name: "name", type: "text", maxlength: PASSKEY_NAME_MAX_LENGTH, autocomplete: "off", value, required: true });

/**
 * "Passkeys" on the security page: the user's passkeys (renamed or deleted in their row) and
 * adding one on this device. A passkey signs in by itself, with the device's own check (PIN,
 * fingerprint or face) as the second factor.
 */
export function passkeysSection(ctx: AppContext): { element: HTMLElement; stop(): void } {
  const list = pagedList<PasskeyView>({
    id: "passkeys",
    empty: "No passkey yet.",
    load: async () => ({ items: await ctx.client.auth.passkey.list(), nextCursor: null }),
    row: (passkey) => {
      const label = passkeyLabel(passkey);
      const row = h(
        "li",
        { "data-id": passkey.id },
        h("span", { class: "grow" }, h("strong", {}, label)),
        h("span", { class: "muted" }, `Added ${new Date(passkey.createdAt).toLocaleDateString()}`),
      );
      row.append(
        editButton({
          label: `Rename ${label}`,
          text: "Rename",
          row,
          fields: () => [labelled("Name", nameInput(passkey.name ?? ""))],
          save: async (form) => {
            const renamed = await ctx.client.auth.passkey.rename({ id: passkey.id, name: field(form, "name").trim() });
            list.update(passkey.id, renamed);
            ctx.showNotice(`The passkey is renamed ${passkeyLabel(renamed)}.`);
          },
        }),
        deleteButton(
          `Delete ${label}`,
          `Delete the passkey ${label}?`,
          async () => {
            await ctx.client.auth.passkey.delete({ id: passkey.id });
            list.remove(passkey.id);
            ctx.showNotice(`${label} is deleted: it no longer signs you in.`);
          },
          (e) => ctx.showError(e),
        ),
      );
      return row;
    },
  });

  const add = h(
    "form",
    { id: "passkey-add-form", class: "card", novalidate: true, "aria-labelledby": "passkey-add-form-title" },
    h("h3", { id: "passkey-add-form-title" }, "Add a passkey on this device"),
    labelled("Name (optional)", h("input", { name: "name", type: "text", maxlength: PASSKEY_NAME_MAX_LENGTH, autocomplete: "off" }), {
      hint: "To tell your passkeys apart, e.g. “Work laptop”.",
    }),
    h("button", { type: "submit" }, "Add a passkey"),
    formSummary(),
  );
  onSubmit(
    add,
    async () => {
      await addPasskey(ctx.client, field(add, "name").trim() || undefined);
      add.reset();
      await list.reload();
      ctx.showNotice("The passkey is added: you can sign in with it.");
    },
    { session_not_fresh: "Adding a passkey needs a recent sign-in: sign out, sign in again, then add it." },
  );
  const unsupported = h("p", { class: "muted", id: "passkeys-unsupported" }, "This browser cannot make or use passkeys.");

  const element = h(
    "section",
    { id: "passkeys-section", class: "card", "aria-labelledby": "passkeys-section-title" },
    h("h2", { id: "passkeys-section-title" }, "Passkeys"),
    h("p", { class: "muted" }, "A passkey signs you in without a password, checked by this device's PIN, fingerprint or face."),
    list.element,
    passkeysSupported() ? add : unsupported,
  );
  list.reload().catch((e: unknown) => ctx.showError(e));
  return { element, stop: () => list.stop() };
}
