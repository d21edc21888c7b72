import { type MailCatcher, startMailCatcher } from "@app/mailer/catcher";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppClient, createClient, memoryStorage } from "../src/index.js";
import { cookieFetch, freshEmail, signUpSignedIn, startStack } from "./helpers.js";

// Organizations through the SDK against a real identity and API: invitations travel by real SMTP
// to a catcher, and their ids are read from the mails; shared projects are the API's.
/** The web app's origin (CORS_ORIGINS): where mailed links send the browser; nothing answers there. */
const WEB = "http://localhost:5173";
const PASSWORD = "correct horse battery";
let catcher: MailCatcher;
let env: Awaited<ReturnType<typeof startStack>>;
beforeAll(async () => {
  catcher = await startMailCatcher({ port: 0 });
  env = await startStack({ SMTP_URL: catcher.url, MAIL_FROM: "Taskboard <no-reply@example.com>", CORS_ORIGINS: WEB });
});
afterAll(async () => {
  await env?.stop();
  await catcher?.close();
});

interface Person {
  client: AppClient;
  email: string;
  id: string;
}

/** Signs a new user up in a browser of their own and verifies the address with the mailed link (invitations need it). */
async function person(prefix: string): Promise<Person> {
  const jar = cookieFetch();
  const client = createClient({ baseUrl: env.stack.baseUrl, storage: memoryStorage(), fetch: jar.fetch });
  const email = freshEmail(prefix);
  const { user } = await signUpSignedIn(client, { email, password: PASSWORD, name: `${prefix} person`, callbackURL: `${WEB}/` });
  const mail = await catcher.waitFor((m) => m.to.includes(email) && m.links.some((l) => l.includes("/verify-email")), 15_000);
  const link = mail.links.find((l) => l.includes("/verify-email")) ?? "";
  const opened = await jar.fetch(link, { credentials: "include", redirect: "manual" });
  expect(opened.status).toBe(302);
  expect((await client.auth.currentSession())?.user.emailVerified).toBe(true);
  return { client, email, id: user.id };
}

/** The invitation id of the latest invitation mail to `to` (its link ends in `/accept-invitation/<id>`). */
async function invitationIdFor(to: string, after = 0): Promise<string> {
  const mail = await catcher.waitFor(
    (m) => m.id > after && m.to.includes(to) && m.links.some((l) => l.includes("/accept-invitation/")),
    15_000,
  );
  const link = mail.links.find((l) => l.includes("/accept-invitation/")) ?? "";
  return decodeURIComponent(new URL(link).pathname.split("/").pop() ?? "");
}

const lastMailId = () => Math.max(0, ...catcher.messages().map((m) => m.id));

describe("organizations", () => {
  it("an owner creates an organization and a shared project, invites by mail; the invitee accepts and both see the project; removal ends access at the next request", async () => {
    const [ada, bob] = await Promise.all([person("ada"), person("bob")]);
    const slug = `analytical-${Date.now().toString(36)}`;
    await expect(ada.client.auth.organization.checkSlug({ slug })).resolves.toBeUndefined();
    const org = await ada.client.auth.organization.create({ name: "Analytical Engines", slug });
    expect(org.members.map((m) => [m.userId, m.role])).toEqual([[ada.id, "owner"]]);
    await expect(ada.client.auth.organization.checkSlug({ slug })).rejects.toMatchObject({ status: 400, code: "bad_request" });
    // create makes it active: on the session, never in the JWT.
    expect(await ada.client.auth.organization.activeId()).toBe(org.id);
    expect((await ada.client.auth.organization.list()).map((o) => o.id)).toEqual([org.id]);

    const project = await ada.client.projects.create({ name: "Difference engine", organizationId: org.id });
    expect(project.organizationId).toBe(org.id);
    await expect(bob.client.projects.list({ organizationId: org.id })).rejects.toMatchObject({ status: 404 });

    const before = lastMailId();
    const invitation = await ada.client.auth.organization.inviteMember({ email: bob.email, role: "member", organizationId: org.id });
    expect(invitation).toMatchObject({ email: bob.email, role: "member", status: "pending" });
    const invitationId = await invitationIdFor(bob.email, before);
    expect(invitationId).toBe(invitation.id);
    expect((await ada.client.auth.organization.listInvitations({ organizationId: org.id })).map((i) => i.id)).toEqual([invitation.id]);
    expect((await bob.client.auth.organization.listUserInvitations()).map((i) => [i.id, i.organizationName])).toEqual([
      [invitation.id, "Analytical Engines"],
    ]);
    // Only its recipient reads it.
    await expect(ada.client.auth.organization.getInvitation({ id: invitationId })).rejects.toMatchObject({
      status: 403,
      code: "forbidden",
    });
    const details = await bob.client.auth.organization.getInvitation({ id: invitationId });
    expect(details).toMatchObject({ organizationName: "Analytical Engines", inviterEmail: ada.email, role: "member" });

    const accepted = await bob.client.auth.organization.acceptInvitation({ invitationId });
    expect(accepted.member).toMatchObject({ userId: bob.id, organizationId: org.id, role: "member" });
    expect(await bob.client.auth.organization.activeId()).toBe(org.id);
    // The same JWT as before accepting: membership is read by the API on each request.
    const bobToken = bob.client.auth.token();
    expect((await bob.client.projects.list({ organizationId: org.id })).items.map((p) => p.id)).toEqual([project.id]);
    expect((await ada.client.projects.list({ organizationId: org.id })).items.map((p) => p.id)).toEqual([project.id]);
    expect((await bob.client.projects.list()).items).toEqual([]); // their own list stays their own
    await expect(bob.client.auth.organization.acceptInvitation({ invitationId })).rejects.toMatchObject({ status: 400 });

    const { members, total } = await ada.client.auth.organization.listMembers({ organizationId: org.id });
    expect(total).toBe(2);
    const bobMember = members.find((m) => m.userId === bob.id);
    expect(bobMember?.user?.email).toBe(bob.email);
    expect(
      (await ada.client.auth.organization.updateMemberRole({ memberId: bobMember?.id ?? "", role: "admin", organizationId: org.id })).role,
    ).toBe("admin");
    expect((await bob.client.auth.organization.getActiveMember()).role).toBe("admin");

    const removed = await ada.client.auth.organization.removeMember({ memberIdOrEmail: bob.email, organizationId: org.id });
    expect(removed.userId).toBe(bob.id);
    expect(bob.client.auth.token()).toBe(bobToken);
    await expect(bob.client.projects.list({ organizationId: org.id })).rejects.toMatchObject({ status: 404 });
    await expect(bob.client.projects.get(project.id)).rejects.toMatchObject({ status: 404 });
    expect(await bob.client.auth.organization.activeId()).toBeNull();
    expect(await bob.client.auth.organization.list()).toEqual([]);
  });

  it("invitations are declined by their recipient and withdrawn by the organization; members switch the active organization", async () => {
    const [owner, guest] = await Promise.all([person("owner"), person("guest")]);
    const first = await owner.client.auth.organization.create({ name: "First", slug: `first-${Date.now().toString(36)}` });
    const second = await owner.client.auth.organization.create({
      name: "Second",
      slug: `second-${Date.now().toString(36)}`,
      keepCurrentActiveOrganization: true,
    });
    expect(await owner.client.auth.organization.activeId()).toBe(first.id);
    expect((await owner.client.auth.organization.setActive({ organizationId: second.id }))?.id).toBe(second.id);
    expect((await owner.client.auth.organization.getFullOrganization())?.id).toBe(second.id);
    expect(await owner.client.auth.organization.setActive({ organizationId: null })).toBeNull();
    expect(await owner.client.auth.organization.activeId()).toBeNull();

    let before = lastMailId();
    await owner.client.auth.organization.inviteMember({ email: guest.email, role: "member", organizationId: first.id });
    const declined = await guest.client.auth.organization.rejectInvitation({ invitationId: await invitationIdFor(guest.email, before) });
    expect(declined.status).toBe("rejected");

    before = lastMailId();
    await owner.client.auth.organization.inviteMember({ email: guest.email, role: "admin", organizationId: first.id });
    const withdrawnId = await invitationIdFor(guest.email, before);
    expect((await owner.client.auth.organization.cancelInvitation({ invitationId: withdrawnId })).status).toBe("canceled");
    await expect(guest.client.auth.organization.acceptInvitation({ invitationId: withdrawnId })).rejects.toMatchObject({ status: 400 });
    expect(await guest.client.auth.organization.list()).toEqual([]);

    // The only owner cannot leave; they delete it instead.
    await expect(owner.client.auth.organization.leave({ organizationId: second.id })).rejects.toMatchObject({ status: 400 });
    expect((await owner.client.auth.organization.delete({ organizationId: second.id })).id).toBe(second.id);
    expect((await owner.client.auth.organization.list()).map((o) => o.id)).toEqual([first.id]);
  });

  it("teams: created by an admin, members added and taken off", async () => {
    const [lead, mate] = await Promise.all([person("lead"), person("mate")]);
    const org = await lead.client.auth.organization.create({ name: "Teams", slug: `teams-${Date.now().toString(36)}` });
    const before = lastMailId();
    await lead.client.auth.organization.inviteMember({ email: mate.email, role: "member", organizationId: org.id });
    await mate.client.auth.organization.acceptInvitation({ invitationId: await invitationIdFor(mate.email, before) });

    const team = await lead.client.auth.organization.createTeam({ name: "Research", organizationId: org.id });
    expect((await lead.client.auth.organization.listTeams({ organizationId: org.id })).map((t) => t.name)).toContain("Research");
    await expect(mate.client.auth.organization.createTeam({ name: "Not allowed", organizationId: org.id })).rejects.toMatchObject({
      status: 403,
    });
    expect(await lead.client.auth.organization.addTeamMember({ teamId: team.id, userId: mate.id, organizationId: org.id })).toMatchObject({
      teamId: team.id,
      userId: mate.id,
    });
    expect((await mate.client.auth.organization.listTeamMembers({ teamId: team.id })).map((m) => m.userId)).toEqual([mate.id]);
    await lead.client.auth.organization.removeTeamMember({ teamId: team.id, userId: mate.id, organizationId: org.id });
    await expect(mate.client.auth.organization.listTeamMembers({ teamId: team.id })).rejects.toMatchObject({ status: 400 });
    expect((await lead.client.auth.organization.updateTeam({ teamId: team.id, data: { name: "Research & Development" } })).name).toBe(
      "Research & Development",
    );
  });
});
