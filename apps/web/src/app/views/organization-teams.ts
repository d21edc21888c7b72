import type { TeamMemberView, TeamView } from "@app/contracts";
import { h, replace } from "../dom.js";
import { formSummary, labelled, onSubmit } from "../forms.js";
import { confirmedButton, memberName, type OrganizationPage } from "./organization-members.js";

/** A select of the organization's members (by user id), for adding to or taking off a team. */
function memberSelect(page: OrganizationPage, label: string, userIds: string[]): HTMLSelectElement {
  const members = page.organization.members.filter((m) => userIds.includes(m.userId));
  return h(
    "select",
    { name: "userId", "aria-label": label },
    ...members.map((member) => h("option", { value: member.userId }, memberName(member))),
  );
}

/** A one-select form of a team ("Add to the team", "Take off the team"). */
function teamForm(label: string, select: HTMLSelectElement, button: string, run: () => Promise<void>): HTMLFormElement {
  const form = h(
    "form",
    { class: "inline team-add", novalidate: true, "aria-label": label },
    select,
    h("button", { type: "submit", class: "secondary small" }, button),
    formSummary(),
  );
  onSubmit(form, run);
  return form;
}

function teamRow(page: OrganizationPage, team: TeamView): HTMLElement {
  const { ctx } = page;
  const organizationId = page.organization.id;
  const everyone = page.organization.members.map((m) => m.userId);
  const members = h("div", { class: "team-body" }, h("p", { class: "muted" }, "Loading the team…"));
  const controls = (onTeam: string[] | undefined) => {
    const addable = onTeam ? everyone.filter((id) => !onTeam.includes(id)) : everyone;
    const parts: HTMLElement[] = [];
    if (page.manages && addable.length) {
      const select = memberSelect(page, `Member to add to ${team.name}`, addable);
      parts.push(
        teamForm(`Add a member to ${team.name}`, select, "Add to the team", async () => {
          await ctx.client.auth.organization.addTeamMember({ teamId: team.id, userId: select.value, organizationId });
          await page.reload(`Added to ${team.name}.`);
        }),
      );
    }
    // Without the team's list (it is shown to the team's own members), anyone may be taken off.
    if (page.manages && !onTeam && everyone.length) {
      const select = memberSelect(page, `Member to take off ${team.name}`, everyone);
      parts.push(
        teamForm(`Take a member off ${team.name}`, select, "Take off the team", async () => {
          await ctx.client.auth.organization.removeTeamMember({ teamId: team.id, userId: select.value, organizationId });
          await page.reload(`Taken off ${team.name}.`);
        }),
      );
    }
    return parts;
  };
  const show = (list: TeamMemberView[] | undefined) => {
    if (!list) {
      replace(members, h("p", { class: "muted" }, "Its members are listed to the team's own members."), ...controls(undefined));
      return;
    }
    const onTeam = list.map((m) => m.userId);
    const rows = page.organization.members
      .filter((m) => onTeam.includes(m.userId))
      .map((member) =>
        h(
          "li",
          { "data-user-id": member.userId },
          h("span", { class: "grow" }, memberName(member)),
          page.manages
            ? h(
                "button",
                {
                  type: "button",
                  class: "secondary small",
                  "aria-label": `Take off ${team.name}: ${memberName(member)}`,
                  onclick: (event: Event) => {
                    (event.currentTarget as HTMLButtonElement).disabled = true;
                    ctx.client.auth.organization
                      .removeTeamMember({ teamId: team.id, userId: member.userId, organizationId })
                      .then(() => page.reload(`${memberName(member)} is off ${team.name}.`))
                      .catch((error: unknown) => ctx.showError(error));
                  },
                },
                "Take off",
              )
            : null,
        ),
      );
    replace(
      members,
      rows.length ? h("ul", { class: "team-members" }, ...rows) : h("p", { class: "muted" }, "Nobody is on this team yet."),
      ...controls(onTeam),
    );
  };
  ctx.client.auth.organization
    .listTeamMembers({ teamId: team.id })
    .then(show)
    .catch(() => show(undefined));
  return h(
    "li",
    { "data-team-id": team.id, class: "team" },
    h("div", { class: "grow stack" }, h("strong", {}, team.name), members),
    page.manages
      ? confirmedButton(
          ctx,
          "Delete",
          { "aria-label": `Delete the team ${team.name}` },
          `Delete the team “${team.name}”?`,
          "Delete",
          async () => {
            await ctx.client.auth.organization.removeTeam({ teamId: team.id, organizationId });
            await page.reload(`The team ${team.name} is deleted.`);
          },
        )
      : null,
  );
}

/** Teams: groups of members inside the organization; admins and owners create them and choose who is on them. */
export function teamsSection(page: OrganizationPage): HTMLElement {
  const { ctx, organization } = page;
  const section = h(
    "section",
    { id: "org-teams", class: "card org-section", "aria-labelledby": "org-teams-title" },
    h("h2", { id: "org-teams-title" }, `Teams (${organization.teams.length})`),
    organization.teams.length
      ? h("ul", { id: "team-list", class: "list" }, ...organization.teams.map((team) => teamRow(page, team)))
      : h("p", { class: "muted", id: "team-list-empty" }, "No teams yet."),
  );
  if (page.manages) {
    const form = h(
      "form",
      { id: "create-team", class: "stack", novalidate: true, "aria-label": "New team" },
      labelled("Team name", h("input", { name: "name", required: true, maxlength: 200, autocomplete: "off" })),
      h("div", { class: "inline" }, h("button", { type: "submit" }, "Create the team")),
      formSummary(),
    );
    onSubmit(form, async () => {
      const name = (new FormData(form).get("name") as string | null)?.trim() ?? "";
      await ctx.client.auth.organization.createTeam({ name, organizationId: organization.id });
      await page.reload(`The team ${name} is created.`);
    });
    section.append(form);
  }
  return section;
}
