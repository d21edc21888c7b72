import type { OrganizationView } from "@app/contracts";
import type { AppContext, View } from "../context.js";
import { field, h, replace } from "../dom.js";
import { formSummary, labelled, onSubmit } from "../forms.js";
import { invitationHref } from "../router.js";
import { reportSessionEnd } from "../session.js";
import { roleWords } from "./accept-invitation.js";
import { confirmedButton, invitationsSection, membersSection, type OrganizationPage } from "./organization-members.js";
import { teamsSection } from "./organization-teams.js";

/** A slug from a name: lower-case letters and digits joined by single hyphens, at most 64 characters. */
export function slugFrom(name: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64)
    .replace(/-+$/g, "");
  return slug || "organization";
}

/** "New organization": a name and its slug (made from the name unless typed); the new one becomes active. */
function createForm(ctx: AppContext): HTMLFormElement {
  const name = h("input", { name: "name", required: true, maxlength: 100, autocomplete: "organization" });
  const slug = h("input", { name: "slug", required: true, maxlength: 64, autocomplete: "off", spellcheck: "false" });
  let typed = false;
  name.addEventListener("input", () => {
    if (!typed) slug.value = slugFrom(name.value);
  });
  slug.addEventListener("input", () => {
    typed = slug.value !== "";
  });
  const form = h(
    "form",
    { id: "create-organization", class: "card org-section", novalidate: true, "aria-labelledby": "create-organization-title" },
    h("h2", { id: "create-organization-title" }, "New organization"),
    labelled("Name", name),
    labelled("Short name (slug)", slug, { hint: "Letters, digits and hyphens; it names the organization in links." }),
    h("div", { class: "inline" }, h("button", { type: "submit" }, "Create the organization")),
    formSummary(),
  );
  onSubmit(form, async () => {
    const created = await ctx.client.auth.organization.create({ name: field(form, "name"), slug: field(form, "slug") });
    // create makes it the session's active organization.
    await ctx.refreshSession();
    ctx.activeOrganizationId = created.id;
    ctx.navigate("#/organization", `${created.name} is created, and you are working in it. Invite people below.`);
  });
  return form;
}

/** The user's organizations and invitations while none is active. */
function noneActive(ctx: AppContext, body: HTMLElement, alive: () => boolean): void {
  const row = (org: OrganizationView) => {
    const open = h("button", { type: "button", class: "secondary small", "aria-label": `Work in ${org.name}` }, "Work in it");
    open.addEventListener("click", () => {
      open.disabled = true;
      ctx.setActiveOrganization(org.id).catch((error: unknown) => {
        open.disabled = false;
        ctx.showError(error);
      });
    });
    return h("li", { "data-organization-id": org.id }, h("strong", { class: "grow" }, org.name), open);
  };
  const invitations = h("div", { id: "my-invitations" });
  replace(
    body,
    h("p", { id: "organization-none" }, "You are working on your own: your projects are yours alone."),
    h(
      "section",
      { class: "card org-section", "aria-labelledby": "my-organizations-title" },
      h("h2", { id: "my-organizations-title" }, "Your organizations"),
      ctx.organizations.length
        ? h("ul", { id: "organization-list", class: "list" }, ...ctx.organizations.map(row))
        : h("p", { class: "muted" }, "You are in no organization yet. Create one below, or accept an invitation."),
    ),
    invitations,
    createForm(ctx),
  );
  ctx.client.auth.organization
    .listUserInvitations()
    .then((list) => {
      if (!alive() || !list.length) return;
      replace(
        invitations,
        h(
          "section",
          { class: "card org-section", "aria-labelledby": "my-invitations-title" },
          h("h2", { id: "my-invitations-title" }, "Invitations to you"),
          h(
            "ul",
            { class: "list" },
            ...list.map((invitation) =>
              h(
                "li",
                { "data-invitation-id": invitation.id },
                h("span", { class: "grow" }, `${invitation.organizationName}, as ${roleWords(invitation.role)}`),
                h("a", { href: invitationHref(invitation.id) }, "See the invitation"),
              ),
            ),
          ),
        ),
      );
    })
    .catch(() => undefined); // an unconfirmed address may not list them; the mailed link still works
}

/** Renaming (admins and owners), leaving, and deleting (owners). */
function settingsSection(page: OrganizationPage): HTMLElement {
  const { ctx, organization, me } = page;
  const owner = me.role.split(",").some((r) => r.trim() === "owner");
  const section = h(
    "section",
    { id: "org-settings", class: "card org-section", "aria-labelledby": "org-settings-title" },
    h("h2", { id: "org-settings-title" }, "Settings"),
  );
  if (page.manages) {
    const form = h(
      "form",
      { id: "rename-organization", class: "stack", novalidate: true, "aria-label": "Rename the organization" },
      labelled("Name", h("input", { name: "name", required: true, maxlength: 100, value: organization.name, autocomplete: "off" })),
      h("div", { class: "inline" }, h("button", { type: "submit", class: "secondary" }, "Rename")),
      formSummary(),
    );
    onSubmit(form, async () => {
      await ctx.client.auth.organization.update({ organizationId: organization.id, data: { name: field(form, "name") } });
      await ctx.refreshSession();
      await page.reload("The organization is renamed.");
    });
    section.append(form);
  }
  const leaving = async (notice: string) => {
    await ctx.refreshSession();
    ctx.navigate("#/organization", notice);
  };
  const tools = h(
    "div",
    { class: "inline" },
    confirmedButton(ctx, "Leave the organization", { id: "leave-organization" }, `Leave ${organization.name}?`, "Leave", async () => {
      await ctx.client.auth.organization.leave({ organizationId: organization.id });
      await leaving(`You left ${organization.name}.`);
    }),
    owner
      ? confirmedButton(
          ctx,
          "Delete the organization",
          { id: "delete-organization" },
          `Delete ${organization.name}, its projects and everything in them?`,
          "Delete",
          async () => {
            await ctx.client.auth.organization.delete({ organizationId: organization.id });
            await leaving(`${organization.name} is deleted, with its projects.`);
          },
        )
      : null,
  );
  section.append(tools);
  return section;
}

/**
 * The active organization's page: members and their roles (change, remove), invitations (invite,
 * withdraw) and teams for its admins and owners; leaving and deleting. With no active
 * organization: the user's organizations, the invitations to them, and a form to create one.
 */
export const organizationView: View = (ctx, root) => {
  const title = h("h1", { id: "organization-title" }, "Organization");
  const body = h("div", { id: "organization-body", class: "stack", "data-state": "loading" }, h("p", { class: "muted" }, "Loading…"));
  root.append(title, body);
  let alive = true;
  const isAlive = () => alive;
  const organizationId = ctx.activeOrganizationId;
  if (!organizationId) {
    noneActive(ctx, body, isAlive);
    body.dataset.state = "none";
    return () => {
      alive = false;
    };
  }
  const load = async (notice?: string): Promise<void> => {
    const organization = await ctx.client.auth.organization.getFullOrganization({ organizationId });
    if (!alive) return;
    const me = organization?.members.find((m) => m.userId === ctx.user?.id);
    if (!organization || !me) {
      // Removed, or the organization is gone: the header and this page go back to the user's own work.
      await ctx.refreshSession();
      if (alive) replace(body, h("p", { id: "organization-gone", role: "alert" }, "You are not a member of this organization any more."));
      return;
    }
    const manages = me.role.split(",").some((r) => ["owner", "admin"].includes(r.trim()));
    const page: OrganizationPage = { ctx, organization, me, manages, reload: load };
    title.textContent = organization.name;
    replace(
      body,
      h("p", { class: "muted", id: "organization-role" }, `You are ${roleWords(me.role)} of this organization.`),
      membersSection(page),
      manages ? invitationsSection(page) : null,
      teamsSection(page),
      settingsSection(page),
      createForm(ctx),
    );
    body.dataset.state = "ready";
    if (notice) ctx.showNotice(notice);
  };
  load().catch((error: unknown) => {
    if (!alive || reportSessionEnd(error)) return;
    replace(body, h("p", { role: "alert" }, "The organization could not be loaded."));
    ctx.showError(error);
  });
  return () => {
    alive = false;
  };
};
