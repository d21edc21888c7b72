import { ApiError } from "@app/client";
import { type AdminUserView, KNOWN_ROLES } from "@app/contracts";
import type { AppContext, View } from "../context.js";
import { h, replace } from "../dom.js";
import { formSummary, onSubmit } from "../forms.js";
import { pagedList } from "../paged-list.js";
import { adminNav } from "./admin-users.js";

/**
 * A role picker: a multiple `<select>` of the known roles (packages/contracts/src/admin.ts), plus
 * any other role the user already holds so that saving does not drop it unseen.
 */
function roleEditor(ctx: AppContext, user: AdminUserView, shown: HTMLElement): HTMLElement {
  const names = [...new Set<string>([...KNOWN_ROLES, ...user.roles])].sort();
  const select = h(
    "select",
    { name: "roles", multiple: true, size: Math.min(4, Math.max(2, names.length)), "aria-label": `Roles of ${user.email}` },
    ...names.map((role) => h("option", { value: role, selected: user.roles.includes(role) }, role)),
  );
  const form = h(
    "form",
    { class: "inline wrap", "aria-label": `Change the roles of ${user.email}` },
    select,
    h("button", { type: "submit" }, "Save"),
    formSummary(),
  );
  onSubmit(form, async () => {
    const roles = [...select.selectedOptions].map((o) => o.value);
    const saved = await ctx.client.admin.setRoles(user.id, roles);
    shown.textContent = saved.roles.join(", ") || "—";
    ctx.showNotice(`Roles of ${user.email} saved.`);
  });
  return form;
}

/** Users and their roles (read from user_role by the service); 403 for callers who are not admins. */
export const adminView: View = (ctx, root) => {
  const body = h("div", { id: "admin-body" }, h("p", { class: "muted" }, "Loading…"));
  root.append(h("h1", {}, "Users and roles"), adminNav("roles"), body);
  const list = pagedList<AdminUserView>({
    id: "admin-users",
    empty: "No users.",
    load: (cursor) => ctx.client.admin.users({ limit: 50, ...(cursor ? { cursor } : {}) }),
    row: (user) => {
      const roles = h("span", { class: "roles" }, user.roles.join(", ") || "—");
      return h(
        "li",
        { class: "item", "data-id": user.id, "data-user-id": user.id },
        h("div", { class: "grow" }, h("strong", {}, user.name), h("p", { class: "muted" }, user.email), h("p", {}, "Roles: ", roles)),
        roleEditor(ctx, user, roles),
      );
    },
  });
  let alive = true;
  ctx.client.admin
    .users({ limit: 1 })
    .then(() => {
      if (!alive) return;
      replace(body, list.element);
      return list.reload();
    })
    .catch((error: unknown) => {
      if (!alive) return;
      if (error instanceof ApiError && error.status === 403) {
        replace(
          body,
          h("p", { id: "admin-forbidden", class: "notice" }, "Only admins can see this page (your account has no admin role)."),
        );
      } else ctx.showError(error);
    });
  return () => {
    alive = false;
    list.stop();
  };
};
