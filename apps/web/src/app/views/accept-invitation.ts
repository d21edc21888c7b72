import type { InvitationDetails } from "@app/client";
import type { AppContext, View } from "../context.js";
import { h, replace } from "../dom.js";
import { describeError } from "../messages.js";
import { reportSessionEnd } from "../session.js";
import { authView } from "./auth.js";

const ROLE_WORDS: Record<string, string> = { owner: "an owner", admin: "an admin", member: "a member" };

/** "an admin", "a member", or the stored roles as they are. */
export function roleWords(role: string): string {
  const roles = role.split(",").map((r) => ROLE_WORDS[r.trim()] ?? r.trim());
  return roles.join(" and ");
}

/** The invitation's sentence: who invited the reader to which organization, with which role, until when. */
export function invitationSentence(
  invitation: Pick<InvitationDetails, "inviterEmail" | "organizationName" | "role" | "expiresAt">,
): string {
  const until = new Date(invitation.expiresAt).toLocaleString();
  return `${invitation.inviterEmail} invited you to join ${invitation.organizationName} as ${roleWords(invitation.role)}. The invitation is open until ${until}.`;
}

/** The signed-in part: the invitation, Accept and Decline. */
function answer(ctx: AppContext, root: HTMLElement, id: string, alive: () => boolean): void {
  const body = h(
    "div",
    { id: "invitation-body", class: "card org-section", "aria-live": "polite" },
    h("p", { class: "muted" }, "Loading…"),
  );
  root.append(body);
  const problem = (error: unknown) => {
    if (reportSessionEnd(error)) return;
    replace(
      body,
      h("p", { id: "invitation-problem", role: "alert" }, describeError(error)),
      h("p", {}, h("a", { href: "#/tasks" }, "Go to your tasks")),
    );
  };
  ctx.client.auth.organization
    .getInvitation({ id })
    .then((invitation) => {
      if (!alive()) return;
      if (invitation.status !== "pending") {
        replace(body, h("p", { id: "invitation-problem", role: "alert" }, `This invitation was ${invitation.status} already.`));
        return;
      }
      const accept = h("button", { type: "button", id: "accept-invitation" }, "Accept and join");
      const decline = h("button", { type: "button", id: "decline-invitation", class: "secondary" }, "Decline");
      const busy = (on: boolean) => {
        accept.disabled = on;
        decline.disabled = on;
      };
      accept.addEventListener("click", () => {
        busy(true);
        ctx.client.auth.organization
          .acceptInvitation({ invitationId: id })
          .then(() => ctx.refreshSession())
          .then(() => ctx.navigate("#/projects", `You joined ${invitation.organizationName}. Its projects are below.`))
          .catch((error: unknown) => {
            busy(false);
            problem(error);
          });
      });
      decline.addEventListener("click", () => {
        busy(true);
        ctx.client.auth.organization
          .rejectInvitation({ invitationId: id })
          .then(() => ctx.navigate("#/tasks", `You declined the invitation to ${invitation.organizationName}.`))
          .catch((error: unknown) => {
            busy(false);
            problem(error);
          });
      });
      replace(
        body,
        h("h2", { id: "invitation-title" }, `Join ${invitation.organizationName}?`),
        h("p", { id: "invitation-text" }, invitationSentence(invitation)),
        h("p", { class: "muted" }, "As a member you see the organization's shared projects and work in them."),
        h("div", { class: "inline" }, accept, decline),
      );
    })
    .catch((error: unknown) => {
      if (alive()) problem(error);
    });
}

/**
 * Where an invitation mail's link lands (`/accept-invitation/<id>`). Signed out, the page asks to
 * sign in or sign up with the invited address first and comes back here after; signed in, it shows
 * who invited the user to which organization, and Accept (the organization becomes the active
 * one and its projects open) or Decline.
 */
export const acceptInvitationView: View = (ctx, root, params) => {
  const id = params.id ?? "";
  root.append(h("h1", {}, "Invitation to an organization"));
  if (!ctx.user) {
    ctx.returnAfterSignIn(`#/accept-invitation/${encodeURIComponent(id)}`);
    root.append(
      h(
        "p",
        { id: "invitation-sign-in", class: "notice" },
        "To see the invitation, sign in, or create an account, with the email address it was sent to. This page opens again after.",
      ),
    );
    const forms = h("div", { id: "invitation-auth" });
    root.append(forms);
    return authView(ctx, forms, {});
  }
  let alive = true;
  answer(ctx, root, id, () => alive);
  return () => {
    alive = false;
  };
};
