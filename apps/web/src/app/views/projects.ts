import type { ProjectView } from "@app/contracts";
import { deleteButton } from "../confirm.js";
import type { View } from "../context.js";
import { field, h } from "../dom.js";
import { formSummary, labelled, onSubmit } from "../forms.js";
import { editButton } from "../inline-edit.js";
import { pagedList } from "../paged-list.js";

/** Projects: the list (newest first, "Load more"), a create form, edit in place, delete after a confirmation. */
export const projectsView: View = (ctx, root) => {
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
    empty: "No projects yet: create one above.",
    load: (cursor) => ctx.client.projects.list({ limit: 20, ...(cursor ? { cursor } : {}) }),
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
    const project = await ctx.client.projects.create({ name: field(form, "name"), ...(description ? { description } : {}) });
    form.reset();
    list.prepend(project);
  });
  root.append(h("h1", {}, "Projects"), form, list.element);
  void list.reload();
  return list.stop;
};
