import { TASK_STATUSES, type TaskView } from "@app/contracts";
import type { View } from "../context.js";
import { field, h, replace } from "../dom.js";
import { formSummary, showIssues } from "../forms.js";
import { taskHref } from "../router.js";

function taskRow(task: TaskView): HTMLElement {
  return h(
    "li",
    { class: "task", "data-task-id": task.id },
    h("a", { href: taskHref(task.id) }, task.title),
    h("span", { class: `status status-${task.status}` }, task.status),
    h("time", { class: "muted", datetime: task.createdAt }, new Date(task.createdAt).toLocaleString()),
  );
}

/** The task list (newest first, paged with the next cursor) and the create form. */
export const tasksView: View = (ctx, root) => {
  const list = h("ul", { id: "task-list", class: "list" });
  const more = h("button", { type: "button", id: "more-tasks", class: "secondary", hidden: true }, "Load more");
  const empty = h("p", { id: "no-tasks", class: "muted", hidden: true }, "No tasks yet: create one above.");
  let cursor: string | null = null;
  let alive = true;

  const load = async (first: boolean) => {
    const page = await ctx.client.tasks.list({ limit: 20, ...(cursor && !first ? { cursor } : {}) });
    if (!alive) return;
    if (first) replace(list);
    for (const task of page.items) list.append(taskRow(task));
    cursor = page.nextCursor;
    more.hidden = !cursor;
    empty.hidden = list.childElementCount > 0;
    list.dataset.loaded = "true";
  };
  more.addEventListener("click", () => void load(false).catch((e: unknown) => ctx.showError(e)));

  const statusSelect = h(
    "select",
    { name: "status", "aria-label": "Status of the new task" },
    ...TASK_STATUSES.map((s) => h("option", { value: s }, s)),
  );
  const issue = h("p", { class: "field-issue", id: "task-title-issue", "data-issue-for": "title" });
  const form = h(
    "form",
    { id: "create-task", class: "card", novalidate: true, "aria-label": "New task" },
    h(
      "div",
      { class: "inline wrap" },
      h("input", {
        name: "title",
        placeholder: "New task title",
        "aria-label": "New task title",
        "aria-describedby": issue.id,
        required: true,
        maxlength: 500,
      }),
      statusSelect,
      h("button", { type: "submit" }, "Create task"),
    ),
    issue,
    formSummary(),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const title = field(form, "title");
    const status = TASK_STATUSES.find((s) => s === field(form, "status")) ?? "pending";
    ctx.client.tasks
      .create({ title, status })
      .then((task) => {
        if (!alive) return;
        form.reset();
        list.prepend(taskRow(task));
        empty.hidden = true;
      })
      .catch((e: unknown) => showIssues(form, e));
  });

  root.append(h("h1", {}, "Tasks"), form, empty, list, more);
  void load(true).catch((e: unknown) => ctx.showError(e));
  return () => {
    alive = false;
  };
};
