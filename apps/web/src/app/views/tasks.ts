import { TASK_STATUSES, type TaskView } from "@app/contracts";
import type { View } from "../context.js";
import { field, h } from "../dom.js";
import { formSummary, labelled, onSubmit } from "../forms.js";
import { pagedList } from "../paged-list.js";
import { taskHref } from "../router.js";

function taskRow(task: TaskView): HTMLElement {
  return h(
    "li",
    { class: "task", "data-id": task.id, "data-task-id": task.id },
    h("a", { href: taskHref(task.id), class: "grow" }, task.title),
    h(
      "span",
      { class: "row-meta" },
      h("span", { class: `status status-${task.status}` }, task.status),
      h("time", { class: "muted", datetime: task.createdAt }, new Date(task.createdAt).toLocaleString()),
    ),
  );
}

/**
 * The task list (newest first, paged with the next cursor) and the create form. The title has a
 * line of its own, with the status and the button under it, so a phone shows the whole field.
 */
export const tasksView: View = (ctx, root) => {
  const list = pagedList<TaskView>({
    id: "task-list",
    empty: "No tasks yet: create one above.",
    load: (cursor) => ctx.client.tasks.list({ limit: 20, ...(cursor ? { cursor } : {}) }),
    row: taskRow,
  });
  const form = h(
    "form",
    { id: "create-task", class: "card", novalidate: true, "aria-label": "New task" },
    labelled("New task", h("input", { name: "title", placeholder: "What needs doing?", maxlength: 500, autocomplete: "off" })),
    h(
      "div",
      { class: "inline wrap" },
      h("label", { for: "new-task-status" }, "Status"),
      h("select", { name: "status", id: "new-task-status" }, ...TASK_STATUSES.map((s) => h("option", { value: s }, s))),
      h("button", { type: "submit" }, "Create task"),
    ),
    formSummary(),
  );
  onSubmit(form, async () => {
    const status = TASK_STATUSES.find((s) => s === field(form, "status")) ?? "pending";
    const task = await ctx.client.tasks.create({ title: field(form, "title"), status });
    form.reset();
    list.prepend(task);
  });
  root.append(h("h1", {}, "Tasks"), form, list.element);
  void list.reload();
  return list.stop;
};
