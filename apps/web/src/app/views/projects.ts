import { ApiError } from "@app/client";
import type { ProjectView } from "@app/contracts";
import { deleteButton } from "../confirm.js";
import type { View } from "../context.js";
import { field, h } from "../dom.js";
import { formSummary, labelled, onSubmit } from "../forms.js";
import { editButton } from "../inline-edit.js";
import { pagedList } from "../paged-list.js";

/**
 * Projects: the list (newest first, "Load more"), a create form, edit in place, delete after a
 * confirmation. With an active organization (the header's switcher) the page lists and creates
 * that organization's projects, shared with every member; otherwise the user's own. A member
 * removed meanwhile is refused on the next request, and the page says so.
 */
export const projectsView: View = (ctx, root) => {
  const organizationId = ctx.activeOrganizationId;
  const organization = ctx.organizations.find((org) => org.id === organizationId);
  const row = (project: ProjectView): HTMLElement => {
    const li = h(
      "li",
      { class: "item", "data-id": project.id },
      h(
        "div",
        { class: "grow" },
        h("strong", {}, project.name),
        project.description ? h("p", { class: "muted" }, project.description) : null,
      ),
    );
    li.append(
      editButton({
        label: `Edit project ${project.name}`,
        row: li,
        fields: () => [
          labelled("Name", h("input", { name: "name", value: project.name, maxlength: 200, autocomplete: "off" })),
          labelled("Description", h("textarea", { name: "description", rows: 2 }, project.description ?? "")),
        ],
        save: async (form) => {
          const description = field(form, "description").trim();
          const saved = await ctx.client.projects.update(project.id, { name: field(form, "name"), description: description || null });
          list.update(project.id, saved);
        },
      }),
      deleteButton(
        `Delete project ${project.name}`,
        `Delete the project “${project.name}”?`,
        async () => {
          await ctx.client.projects.remove(project.id);
          list.remove(project.id);
          ctx.showNotice(`Project “${project.name}” deleted.`);
        },
        (e) => ctx.showError(e),
      ),
    );
    return li;
  };
  const list = pagedList<ProjectView>({
    id: "project-list",
    empty: organizationId ? "This organization has no projects yet: create one above." : "No projects yet: create one above.",
    load: async (cursor) => {
      try {
        return await ctx.client.projects.list({ limit: 20, ...(cursor ? { cursor } : {}), ...(organizationId ? { organizationId } : {}) });
      } catch (error) {
        // The API answers 404 for an organization the user is not a member of (any more).
        if (!(organizationId && error instanceof ApiError && error.status === 404)) throw error;
        void ctx.refreshSession().catch(() => undefined);
        throw new ApiError(404, "not_a_member", "not a member of the organization");
      }
    },
    row,
  });
  const form = h(
    "form",
    { id: "create-project", class: "card", novalidate: true, "aria-label": "New project" },
    labelled("Name", h("input", { name: "name", required: true, maxlength: 200, autocomplete: "off" })),
    labelled("Description (optional)", h("textarea", { name: "description", rows: 2 })),
    h("div", { class: "inline" }, h("button", { type: "submit" }, "Create project")),
    formSummary(),
  );
  onSubmit(form, async () => {
    const description = field(form, "description").trim();
    const project = await ctx.client.projects.create({
      name: field(form, "name"),
      ...(description ? { description } : {}),
      ...(organizationId ? { organizationId } : {}),
    });
    form.reset();
    list.prepend(project);
  });
  const scope = organizationId
    ? h(
        "p",
        { id: "projects-scope", class: "muted" },
        `Shared in ${organization?.name ?? "the organization"}: every member sees these projects and works in them.`,
      )
    : h(
        "p",
        { id: "projects-scope", class: "muted" },
        ctx.organizations.length
          ? "Your own projects. Pick an organization in the header to see the ones you share."
          : "Your own projects. To share projects with others, create an organization on the Organization page.",
      );
  root.append(h("h1", {}, "Projects"), scope, form, list.element);
  void list.reload();
  return list.stop;
};
