import { ApiError, type ClientErrorCode, type TaskSocket, type TaskStream } from "@app/client";
import {
  type AttachmentView,
  TASK_STATUSES,
  type TaskEventView,
  type TaskMessageView,
  type TaskView,
  taskMessageSchema,
  taskSchema,
} from "@app/contracts";
import { deleteButton } from "../confirm.js";
import type { AppContext, View } from "../context.js";
import { field, files, formatBytes, h, replace } from "../dom.js";
import { formSummary, labelled, onSubmit } from "../forms.js";
import { getTransport, type Transport } from "../settings.js";

function attachmentLink(ctx: AppContext, attachment: AttachmentView): HTMLElement {
  const link = h(
    "a",
    { href: "#", class: "attachment", "data-upload-id": attachment.id },
    `${attachment.filename} (${formatBytes(attachment.size)})`,
  );
  link.addEventListener("click", (event) => {
    event.preventDefault();
    ctx.client.uploads
      .download(attachment.id)
      .then((blob) => {
        const url = URL.createObjectURL(blob);
        const a = h("a", { href: url, download: attachment.filename });
        a.click();
        setTimeout(() => URL.revokeObjectURL(url), 60_000);
      })
      .catch((e: unknown) => ctx.showError(e));
  });
  return link;
}

/**
 * One task: its messages arrive live over SSE (fetch + stream reader, `Last-Event-ID` resume)
 * or over the WebSocket (`?token=`), chosen in Settings → Developer. Each connection replays
 * the task's event log from the start, so the list is built from events only; messages sent
 * from this page also appear only when their event arrives.
 */
export const taskView: View = (ctx, root, params) => {
  const taskId = params.id ?? "";
  const title = h("h1", { id: "task-title" }, "…");
  const status = h("select", { id: "task-status", name: "status" }, ...TASK_STATUSES.map((s) => h("option", { value: s }, s)));
  const messages = h("ul", { id: "messages", class: "list messages" });
  const live = h("span", { id: "live-status", class: "live", "data-state": "connecting" }, "connecting…");
  let stream: TaskStream | undefined;
  let socket: TaskSocket | undefined;
  let generation = 0;

  const showTask = (task: TaskView) => {
    title.textContent = task.title;
    status.value = task.status;
  };
  const setLive = (state: string, text: string) => {
    live.dataset.state = state;
    live.textContent = text;
  };
  const addMessage = (message: TaskMessageView, eventId?: string | null) => {
    if (messages.querySelector(`[data-message-id="${CSS.escape(message.id)}"]`)) return;
    messages.append(
      h(
        "li",
        { class: "message", "data-message-id": message.id, "data-event-id": eventId ?? "" },
        h("p", {}, message.text),
        ...message.attachments.map((a) => attachmentLink(ctx, a)),
        h("time", { class: "muted", datetime: message.createdAt }, new Date(message.createdAt).toLocaleTimeString()),
      ),
    );
  };
  /**
   * The API replays at most SSE_MAX_RESUME_EVENTS stored events and says `resync` for a resume
   * point further back (apps/api/src/tasks/routes.ts): the messages then come from the list route,
   * page by page, and the connection goes on live.
   */
  const refetch = async (mine: number) => {
    let cursor: string | undefined;
    do {
      const page = await ctx.client.tasks.messages(taskId, { limit: 100, ...(cursor ? { cursor } : {}) });
      if (mine !== generation) return;
      for (const message of page.items) addMessage(message);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  };
  const onEvent = (event: TaskEventView) => {
    if (event.type === "message.created") {
      const message = taskMessageSchema.safeParse(event.data);
      if (message.success) addMessage(message.data, event.id);
    } else if (event.type === "task.updated") {
      const task = taskSchema.safeParse(event.data);
      if (task.success) showTask(task.data);
    } else if (event.type === "task.deleted") {
      ctx.navigate("#/tasks");
    }
  };
  const disconnect = () => {
    generation += 1;
    stream?.close();
    socket?.close();
    stream = undefined;
    socket = undefined;
  };
  const connect = (transport: Transport) => {
    disconnect();
    const mine = generation;
    replace(messages);
    setLive("connecting", `connecting (${transport === "sse" ? "SSE" : "WebSocket"})…`);
    if (transport === "sse") {
      stream = ctx.client.tasks.stream(taskId, {
        lastEventId: "0",
        onEvent,
        onResync: () => void refetch(mine).catch((e: unknown) => ctx.showError(e)),
        onOpen: () => setLive("live", "live (SSE)"),
        onError: (error, fatal) => {
          setLive(fatal ? "closed" : "reconnecting", fatal ? "disconnected" : "reconnecting (SSE)…");
          if (fatal) ctx.showError(error);
        },
      });
      return;
    }
    ctx.client
      .connectSocket({
        onMessage: (message) => {
          if (message.type === "event") onEvent(message.event);
          else if (message.type === "subscribed") setLive("live", "live (WebSocket)");
          else if (message.type === "error" && message.code === "resync") void refetch(mine).catch((e: unknown) => ctx.showError(e));
          else if (message.type === "error") ctx.showError(new ApiError(0, message.code as ClientErrorCode, message.message));
        },
        onClose: () => {
          if (mine === generation) setLive("closed", "disconnected (WebSocket)");
        },
        onReconnecting: () => {
          if (mine === generation) setLive("reconnecting", "reconnecting (WebSocket)…");
        },
        onReconnected: () => {
          if (mine === generation) setLive("live", "live (WebSocket)");
        },
      })
      .then((opened) => {
        if (mine !== generation) return opened.close();
        socket = opened;
        opened.subscribe(taskId, "0");
      })
      .catch((e: unknown) => {
        setLive("closed", "disconnected");
        ctx.showError(e);
      });
  };

  status.addEventListener("change", () => {
    const value = TASK_STATUSES.find((s) => s === status.value);
    if (value) void ctx.client.tasks.update(taskId, { status: value }).catch((e: unknown) => ctx.showError(e));
  });
  const remove = deleteButton(
    "Delete this task",
    "Delete this task and its messages?",
    async () => {
      await ctx.client.tasks.remove(taskId);
      ctx.navigate("#/tasks");
    },
    (e) => ctx.showError(e),
  );
  remove.id = "delete-task";

  const form = h(
    "form",
    { id: "message-form", class: "card", novalidate: true, "aria-label": "Write a message" },
    labelled("Message", h("textarea", { name: "text", rows: 2 })),
    labelled("Attachments", h("input", { type: "file", name: "files", multiple: true })),
    h("div", { class: "inline" }, h("button", { type: "submit" }, "Send")),
    formSummary(),
  );
  onSubmit(form, async () => {
    const attachments = files(form, "files").map((blob) => ({ blob, filename: blob.name }));
    await ctx.client.tasks.addMessage(taskId, field(form, "text"), attachments);
    form.reset();
  });

  root.append(
    h("p", {}, h("a", { href: "#/tasks" }, "← all tasks")),
    title,
    h("div", { class: "toolbar" }, h("label", { for: "task-status" }, "Status"), status, remove, h("span", { class: "spacer" }), live),
    messages,
    form,
  );
  ctx.client.tasks
    .get(taskId)
    .then(showTask)
    .catch((e: unknown) => ctx.showError(e));
  connect(getTransport());
  return disconnect;
};
