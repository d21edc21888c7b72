import { ApiError } from "@app/client";
import type { AdminUserView } from "@app/contracts";
import type { AppContext, View } from "../context.js";
import { h, replace } from "../dom.js";

function roleEditor(ctx: AppContext, user: AdminUserView, shown: HTMLElement): HTMLElement {
  const input = h("input", { name: "roles", value: user.roles.join(", "), "aria-label": `roles of ${user.email}` });
  const form = h("form", { class: "inline" }, input, h("button", { type: "submit" }, "Save"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const roles = input.value
      .split(",")
      .map((r) => r.trim())
      .filter(Boolean);
    ctx.client.admin
      .setRoles(user.id, roles)
      .then((saved) => {
        input.value = saved.roles.join(", ");
        shown.textContent = saved.roles.join(", ") || "—";
      })
      .catch((e: unknown) => ctx.showError(e));
  });
  return form;
}

/** Users and their roles (read from user_role by the service); 403 for callers who are not admins. */
export const adminView: View = (ctx, root) => {
  const body = h("div", { id: "admin-body" }, h("p", { class: "muted" }, "Loading…"));
  root.append(h("h1", {}, "Users and roles"), body);
  let alive = true;
  ctx.client.admin
    .users({ limit: 100 })
    .then((page) => {
      if (!alive) return;
      const rows = page.items.map((user) => {
        const roles = h("td", { class: "roles" }, user.roles.join(", ") || "—");
        return h(
          "tr",
          { "data-user-id": user.id },
          h("td", {}, user.name),
          h("td", {}, user.email),
          roles,
          h("td", {}, roleEditor(ctx, user, roles)),
        );
      });
      replace(
        body,
        h(
          "table",
          { id: "admin-users", class: "table" },
          h("thead", {}, h("tr", {}, h("th", {}, "Name"), h("th", {}, "Email"), h("th", {}, "Roles"), h("th", {}, "Change roles"))),
          h("tbody", {}, ...rows),
        ),
        page.nextCursor ? h("p", { class: "muted" }, "Showing the first 100 users.") : null,
      );
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
  };
};
