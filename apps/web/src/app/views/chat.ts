import type { ChatMessageView } from "@app/contracts";
import { deleteButton } from "../confirm.js";
import type { View } from "../context.js";
import { field, h } from "../dom.js";
import { formSummary, labelled, onSubmit } from "../forms.js";
import { editButton } from "../inline-edit.js";
import { pagedList } from "../paged-list.js";

const ROLE_NAMES = { user: "You", assistant: "Assistant", system: "System" } as const;

function messageRow(message: ChatMessageView): HTMLElement {
  return h(
    "li",
    { class: `message role-${message.role}`, "data-id": message.id, "data-role": message.role },
    h("span", { class: "who" }, ROLE_NAMES[message.role]),
    h("p", {}, message.content),
  );
}

/**
 * One chat: its messages (oldest first, "Load more" for later pages), a form that adds the
 * user's message and, unless unticked, streams an answer from POST /api/generate/stream into
 * the conversation (the chat's agent's instructions as the system prompt), then stores the
 * answer as the assistant's message. The line under the answer names the provider that answered.
 */
export const chatView: View = (ctx, root, params) => {
  const chatId = params.id ?? "";
  const title = h("h1", { id: "chat-title" }, "Chat");
  let system: string | undefined;
  let controller: AbortController | undefined;
  const list = pagedList<ChatMessageView>({
    id: "chat-messages",
    empty: "No messages yet: write the first one below.",
    load: (cursor) => ctx.client.chats.messages(chatId, { limit: 50, ...(cursor ? { cursor } : {}) }),
    row: messageRow,
  });
  const messages = () => list.element.querySelector("ul") as HTMLElement;
  const provider = h("p", { id: "chat-provider", class: "muted", "aria-live": "polite" }, "Answers come from the service's text provider.");
  const answer = async (prompt: string) => {
    controller = new AbortController();
    const text = h("p", {});
    const row = h(
      "li",
      { class: "message role-assistant streaming", "data-role": "assistant" },
      h("span", { class: "who" }, "Assistant"),
      text,
    );
    messages().append(row);
    provider.textContent = "The assistant is answering…";
    let finished = false;
    for await (const event of ctx.client.generate({ prompt, ...(system ? { system } : {}) }, controller.signal)) {
      if (event.type === "delta") text.textContent += event.text;
      else if (event.type === "done") {
        finished = true;
        provider.textContent = `Answered by the “${event.provider}” provider${event.finishReason === "length" ? " (cut at the length limit)" : ""}.`;
      } else {
        row.remove();
        provider.textContent = "The assistant could not answer. Try again in a moment.";
        return;
      }
    }
    if (!finished) return;
    const saved = await ctx.client.chats.addMessage(chatId, { role: "assistant", content: text.textContent ?? "" });
    row.replaceWith(messageRow(saved));
  };
  const ask = h("input", { type: "checkbox", name: "answer", checked: true, id: "chat-ask" });
  const form = h(
    "form",
    { id: "chat-form", class: "card", novalidate: true, "aria-label": "Write a message" },
    labelled("Message", h("textarea", { name: "content", rows: 3, required: true })),
    h(
      "div",
      { class: "inline wrap" },
      h("label", { class: "check", for: "chat-ask" }, ask, "Let the assistant answer"),
      h("span", { class: "spacer" }),
      h("button", { type: "submit" }, "Send"),
    ),
    formSummary(),
  );
  onSubmit(form, async () => {
    const content = field(form, "content");
    const message = await ctx.client.chats.addMessage(chatId, { content });
    form.reset();
    list.append(message);
    if (ask.checked) await answer(content).catch((e: unknown) => ctx.showError(e));
  });
  const remove = deleteButton(
    "Delete this chat",
    "Delete this chat and its messages?",
    async () => {
      await ctx.client.chats.remove(chatId);
      ctx.navigate("#/chats");
    },
    (e) => ctx.showError(e),
  );
  const toolbar = h("div", { class: "toolbar" }, title, h("span", { class: "spacer" }));
  toolbar.append(
    editButton({
      label: "Rename this chat",
      text: "Rename",
      row: toolbar,
      fields: () => [labelled("Title", h("input", { name: "title", value: title.textContent ?? "", maxlength: 300, autocomplete: "off" }))],
      save: async (form) => {
        const saved = await ctx.client.chats.update(chatId, { title: field(form, "title") });
        title.textContent = saved.title;
      },
    }),
    remove,
  );
  root.append(h("p", {}, h("a", { href: "#/chats" }, "← all chats")), toolbar, list.element, provider, form);
  ctx.client.chats
    .get(chatId)
    .then(async (chat) => {
      title.textContent = chat.title;
      if (chat.agentId) system = (await ctx.client.agents.get(chat.agentId).catch(() => null))?.instructions ?? undefined;
    })
    .catch((e: unknown) => ctx.showError(e));
  void list.reload();
  return () => {
    list.stop();
    controller?.abort();
  };
};
