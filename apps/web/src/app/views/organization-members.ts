import type { FullOrganization } from "@app/client";
import type { InvitationView, MemberView } from "@app/contracts";
import { confirmAction } from "../confirm.js";
import type { AppContext } from "../context.js";
import { field, h } from "../dom.js";
import { formSummary, labelled, onSubmit } from "../forms.js";
import { roleWords } from "./accept-invitation.js";

/** What the organization page knows and can do, shared by its sections. */
export interface OrganizationPage {
  ctx: AppContext;
  organization: FullOrganization;
  /** The signed-in user's membership (the page is only shown to members). */
  me: MemberView;
  /** Whether the user's role may manage members, invitations and teams (admin or owner). */
  manages: boolean;
  /** Loads the organization again and redraws the page, then shows `notice`. */
  reload(notice?: string): Promise<void>;
}

/** The roles one may hand out: owners hand out every role, admins admin and member. */
export function grantableRoles(myRole: string): string[] {
  return myRole.split(",").some((r) => r.trim() === "owner") ? ["member", "admin", "owner"] : ["member", "admin"];
}

function roleSelect(name: string, roles: string[], selected: string, label?: string): HTMLSelectElement {
  return h(
    "select",
    { name, ...(label ? { "aria-label": label } : {}) },
    ...roles.map((role) => h("option", { value: role, selected: role === selected }, role)),
  );
}

/** A member's name for sentences and labels. */
export function memberName(member: MemberView): string {
  return member.user?.name || member.user?.email || member.userId;
}

/** Asks first, then runs `action`; the button is disabled meanwhile and a failure goes to the page's alert. */
export function confirmedButton(
  ctx: AppContext,
  text: string,
  props: Record<string, string>,
  question: string,
  verb: string,
  action: () => Promise<void>,
): HTMLButtonElement {
  const button = h("button", { type: "button", class: "danger small", ...props }, text);
  button.addEventListener("click", () => {
    void confirmAction(question, verb).then((yes) => {
      if (!yes) return;
      button.disabled = true;
      action().catch((error: unknown) => {
        button.disabled = false;
        ctx.showError(error);
      });
    });
  });
  return button;
}

function memberRow(page: OrganizationPage, member: MemberView): HTMLElement {
  const { ctx } = page;
  const name = memberName(member);
  const mine = member.id === page.me.id;
  const tools = h("div", { class: "member-tools" });
  if (page.manages && !mine) {
    const select = roleSelect("role", grantableRoles(page.me.role), member.role, `Role of ${name}`);
    const form = h(
      "form",
      { class: "inline role-form", novalidate: true, "aria-label": `Change the role of ${name}` },
      select,
      h("button", { type: "submit", class: "secondary small" }, "Change role"),
      formSummary(),
    );
    onSubmit(form, async () => {
      await ctx.client.auth.organization.updateMemberRole({
        memberId: member.id,
        role: select.value,
        organizationId: member.organizationId,
      });
      await page.reload(`${name} is now ${roleWords(select.value)}.`);
    });
    tools.append(
      form,
      confirmedButton(
        ctx,
        "Remove",
        { "aria-label": `Remove ${name}` },
        `Remove ${name} from ${page.organization.name}?`,
        "Remove",
        async () => {
          await ctx.client.auth.organization.removeMember({ memberIdOrEmail: member.id, organizationId: member.organizationId });
          await page.reload(`${name} is removed: their next request to the organization's projects is refused.`);
        },
      ),
    );
  }
  return h(
    "li",
    { "data-member-id": member.id, "data-user-id": member.userId },
    h(
      "div",
      { class: "grow" },
      h("strong", {}, name, mine ? " (you)" : ""),
      member.user?.email && member.user.email !== name ? h("p", { class: "muted" }, member.user.email) : null,
    ),
    h("span", { class: "pill member-role" }, member.role),
    tools,
  );
}

/** Members: name, address and role of each; admins and owners change roles and remove members. */
export function membersSection(page: OrganizationPage): HTMLElement {
  return h(
    "section",
    { id: "org-members", class: "card org-section", "aria-labelledby": "org-members-title" },
    h("h2", { id: "org-members-title" }, `Members (${page.organization.members.length})`),
    h("ul", { id: "member-list", class: "list" }, ...page.organization.members.map((member) => memberRow(page, member))),
  );
}

function invitationRow(page: OrganizationPage, invitation: InvitationView): HTMLElement {
  return h(
    "li",
    { "data-invitation-id": invitation.id },
    h(
      "div",
      { class: "grow" },
      h("strong", {}, invitation.email),
      h("p", { class: "muted" }, `As ${roleWords(invitation.role)}, open until ${new Date(invitation.expiresAt).toLocaleString()}`),
    ),
    confirmedButton(
      page.ctx,
      "Withdraw",
      { "aria-label": `Withdraw the invitation to ${invitation.email}` },
      `Withdraw the invitation to ${invitation.email}?`,
      "Withdraw",
      async () => {
        await page.ctx.client.auth.organization.cancelInvitation({ invitationId: invitation.id });
        await page.reload(`The invitation to ${invitation.email} is withdrawn: its link no longer works.`);
      },
    ),
  );
}

/**
 * Invitations (admins and owners): invite an address with a role (identity mails it a link to
 * this app's invitation page) and withdraw pending invitations.
 */
export function invitationsSection(page: OrganizationPage): HTMLElement {
  const { ctx, organization } = page;
  const pending = organization.invitations.filter((i) => i.status === "pending");
  const form = h(
    "form",
    { id: "invite-form", class: "stack", novalidate: true, "aria-label": "Invite someone" },
    labelled("Email address", h("input", { name: "email", type: "email", required: true, autocomplete: "off" }), {
      hint: "We mail this address a link to accept. The link works for 48 hours.",
    }),
    labelled("Role", roleSelect("role", grantableRoles(page.me.role), "member")),
    h("div", { class: "inline" }, h("button", { type: "submit" }, "Send the invitation")),
    formSummary(),
  );
  onSubmit(form, async () => {
    const email = field(form, "email").trim();
    await ctx.client.auth.organization.inviteMember({ email, role: field(form, "role"), organizationId: organization.id });
    await page.reload(`We mailed an invitation to ${email}.`);
  });
  return h(
    "section",
    { id: "org-invitations", class: "card org-section", "aria-labelledby": "org-invitations-title" },
    h("h2", { id: "org-invitations-title" }, "Invitations"),
    form,
    h("h3", {}, `Pending (${pending.length})`),
    pending.length
      ? h("ul", { id: "invitation-list", class: "list" }, ...pending.map((invitation) => invitationRow(page, invitation)))
      : h("p", { class: "muted", id: "invitation-list-empty" }, "No pending invitations."),
  );
}
