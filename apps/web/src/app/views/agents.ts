import type { AgentView } from "@app/contracts";
import { deleteButton } from "../confirm.js";
import type { View } from "../context.js";
import { field, h } from "../dom.js";
import { formSummary, labelled, onSubmit } from "../forms.js";
import { editButton } from "../inline-edit.js";
import { pagedList } from "../paged-list.js";

/** Agents: the list, a create form (with an optional project chosen from the user's), edit in place, delete. */
export const agentsView: View = (ctx, root) => {
  const projectNames = new Map<string, string>();
  const row = (agent: AgentView): HTMLElement => {
    const details = [
      agent.model ? `model ${agent.model}` : "default model",
      agent.projectId ? `project ${projectNames.get(agent.projectId) ?? "—"}` : null,
    ];
    const li = h(
      "li",
      { class: "item", "data-id": agent.id },
      h(
        "div",
        { class: "grow" },
        h("strong", {}, agent.name),
        h("p", { class: "muted" }, details.filter(Boolean).join(" · ")),
        agent.instructions ? h("p", { class: "clip" }, agent.instructions) : null,
      ),
    );
    li.append(
      editButton({
        label: `Edit agent ${agent.name}`,
        row: li,
        fields: () => [
          labelled("Name", h("input", { name: "name", value: agent.name, maxlength: 200, autocomplete: "off" })),
          labelled("Instructions", h("textarea", { name: "instructions", rows: 3 }, agent.instructions ?? "")),
          labelled("Model", h("input", { name: "model", value: agent.model ?? "", maxlength: 200, autocomplete: "off" })),
        ],
        save: async (form) => {
          const instructions = field(form, "instructions").trim();
          const model = field(form, "model").trim();
          const saved = await ctx.client.agents.update(agent.id, {
            name: field(form, "name"),
            instructions: instructions || null,
            model: model || null,
          });
          list.update(agent.id, saved);
        },
      }),
      deleteButton(
        `Delete agent ${agent.name}`,
        `Delete the agent “${agent.name}”?`,
        async () => {
          await ctx.client.agents.remove(agent.id);
          list.remove(agent.id);
          ctx.showNotice(`Agent “${agent.name}” deleted.`);
        },
        (e) => ctx.showError(e),
      ),
    );
    return li;
  };
  const list = pagedList<AgentView>({
    id: "agent-list",
    empty: "No agents yet: create one above.",
    load: (cursor) => ctx.client.agents.list({ limit: 20, ...(cursor ? { cursor } : {}) }),
    row,
  });
  const project = h("select", { name: "projectId" }, h("option", { value: "" }, "No project"));
  const form = h(
    "form",
    { id: "create-agent", class: "card", novalidate: true, "aria-label": "New agent" },
    labelled("Name", h("input", { name: "name", required: true, maxlength: 200, autocomplete: "off" })),
    labelled("Instructions (optional)", h("textarea", { name: "instructions", rows: 3 })),
    labelled("Model (optional)", h("input", { name: "model", maxlength: 200, autocomplete: "off" }), {
      hint: "Leave empty for the service's default.",
    }),
    labelled("Project", project),
    h("div", { class: "inline" }, h("button", { type: "submit" }, "Create agent")),
    formSummary(),
  );
  onSubmit(form, async () => {
    const optional = (name: string) => field(form, name).trim() || undefined;
    const instructions = optional("instructions");
    const model = optional("model");
    const projectId = optional("projectId");
    const agent = await ctx.client.agents.create({
      name: field(form, "name"),
      ...(instructions ? { instructions } : {}),
      ...(model ? { model } : {}),
      ...(projectId ? { projectId } : {}),
    });
    form.reset();
    list.prepend(agent);
  });
  root.append(h("h1", {}, "Agents"), form, list.element);
  ctx.client.projects
    .list({ limit: 100 })
    .then((page) => {
      for (const p of page.items) {
        projectNames.set(p.id, p.name);
        project.append(h("option", { value: p.id }, p.name));
      }
    })
    .catch((e: unknown) => ctx.showError(e))
    .finally(() => void list.reload());
  return list.stop;
};
