import { expect } from "vitest";
import { ORIGIN } from "../kit.js";
import type { ConformanceClient, ConformanceContext } from "./context.js";

/**
 * Answers every route of organizations (route-conformance.test.ts): an owner creates and runs an
 * organization; a guest, verified through the mailed link, rejects one invitation, accepts
 * another from its mailed link, works in a team, leaves, is invited back and removed; an
 * invitation to a stranger is canceled; the owner deletes the organization.
 */
export async function drive(ctx: ConformanceContext): Promise<void> {
  const { expectJson, password } = ctx;
  const org = (path: string) => `/api/auth/organization/${path}`;
  const signUp = async (label: string): Promise<{ client: ConformanceClient; email: string; id: string }> => {
    const email = ctx.fresh(label);
    const client = ctx.client();
    const up = await expectJson(await client.post("/api/auth/sign-up/email", { email, password, name: label }));
    return { client, email, id: String((up.user as { id: string }).id) };
  };

  const owner = await signUp("org-owner");
  const slug = `conf-${Date.now()}`;
  await expectJson(await owner.client.post(org("check-slug"), { slug }));
  const created = await expectJson(await owner.client.post(org("create"), { name: "Conformance", slug }));
  const organizationId = String(created.id);
  await expectJson(await owner.client.post(org("update"), { organizationId, data: { name: "Conformance Inc" } }));
  expect(await expectJson(await owner.client.get(org("list")))).toHaveLength(1);
  await expectJson(await owner.client.get(org(`get-full-organization?organizationId=${organizationId}`)));
  await expectJson(await owner.client.post(org("set-active"), { organizationId }));
  await expectJson(await owner.client.post(org("has-permission"), { permissions: { member: ["delete"] } }));
  await expectJson(await owner.client.get(org("get-active-member")));
  await expectJson(await owner.client.get(org("get-active-member-role")));

  // The guest verifies the address the invitations go to.
  const guest = await signUp("org-guest");
  const verifyToken =
    new URL(String((await ctx.mailTo(guest.email, "Verify your email address")).links[0])).searchParams.get("token") ?? "";
  await expectJson(await guest.client.post(`/api/auth/verify-email?token=${encodeURIComponent(verifyToken)}`, {}));
  const inviteGuest = async () => {
    const invitation = await expectJson(
      await owner.client.post(org("invite-member"), { organizationId, email: guest.email, role: "member" }),
    );
    // The web app's accept page: the first trusted origin (route-conformance.test.ts sets ORIGIN).
    const link = `${ORIGIN}/accept-invitation/${invitation.id}`;
    await ctx.catcher.waitFor((m) => m.to.includes(guest.email) && m.links.includes(link));
    return String(invitation.id);
  };

  await expectJson(await guest.client.post(org("reject-invitation"), { invitationId: await inviteGuest() }));
  const invitationId = await inviteGuest();
  await expectJson(await guest.client.get(org(`get-invitation?id=${invitationId}`)));
  await expectJson(await guest.client.get(org("list-user-invitations")));
  const accepted = await expectJson(await guest.client.post(org("accept-invitation"), { invitationId }));
  const memberId = String((accepted.member as { id: string }).id);
  await expectJson(await owner.client.get(org(`list-members?organizationId=${organizationId}`)));
  await expectJson(await owner.client.get(org(`list-invitations?organizationId=${organizationId}`)));
  await expectJson(await owner.client.post(org("update-member-role"), { organizationId, memberId, role: "admin" }));

  const team = await expectJson(await owner.client.post(org("create-team"), { organizationId, name: "Core" }));
  const teamId = String(team.id);
  await expectJson(await owner.client.get(org(`list-teams?organizationId=${organizationId}`)));
  await expectJson(await owner.client.post(org("update-team"), { teamId, data: { name: "Core team", organizationId } }));
  await expectJson(await owner.client.post(org("add-team-member"), { organizationId, teamId, userId: guest.id }));
  await expectJson(await guest.client.post(org("set-active-team"), { teamId }));
  await expectJson(await guest.client.get(org("list-team-members")));
  await expectJson(await guest.client.get(org("list-user-teams")));
  await expectJson(await owner.client.post(org("remove-team-member"), { organizationId, teamId, userId: guest.id }));
  await expectJson(await owner.client.post(org("remove-team"), { organizationId, teamId }));

  await expectJson(await guest.client.post(org("leave"), { organizationId }));
  await expectJson(await guest.client.post(org("accept-invitation"), { invitationId: await inviteGuest() }));
  await expectJson(await owner.client.post(org("remove-member"), { organizationId, memberIdOrEmail: guest.email }));

  const stranger = await expectJson(
    await owner.client.post(org("invite-member"), { organizationId, email: ctx.fresh("org-stranger"), role: "member" }),
  );
  await expectJson(await owner.client.post(org("cancel-invitation"), { invitationId: stranger.id }));
  await expectJson(await owner.client.post(org("delete"), { organizationId }));
}
