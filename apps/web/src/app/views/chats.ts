import type { ChatView } from "@app/contracts";
import { deleteButton } from "../confirm.js";
import type { View } from "../context.js";
import { field, h } from "../dom.js";
import { formSummary, labelled, onSubmit } from "../forms.js";
import { pagedList } from "../paged-list.js";
import { chatHref } from "../router.js";

/** Chats: the list (each opens its page), a create form with an optional agent, delete. */
export const chatsView: View = (ctx, root) => {
  const list = pagedList<ChatView>({
    id: "chat-list",
    empty: "No chats yet: start one above.",
    load: (cursor) => ctx.client.chats.list({ limit: 20, ...(cursor ? { cursor } : {}) }),
    row: (chat) =>
      h(
        "li",
        { class: "item", "data-id": chat.id },
        h("a", { href: chatHref(chat.id), class: "grow" }, chat.title),
        h("time", { class: "muted", datetime: chat.createdAt }, new Date(chat.createdAt).toLocaleDateString()),
        deleteButton(
          `Delete chat ${chat.title}`,
          `Delete the chat “${chat.title}” and its messages?`,
          async () => {
            await ctx.client.chats.remove(chat.id);
            list.remove(chat.id);
            ctx.showNotice(`Chat “${chat.title}” deleted.`);
          },
          (e) => ctx.showError(e),
        ),
      ),
  });
  const agent = h("select", { name: "agentId" }, h("option", { value: "" }, "No agent"));
  const form = h(
    "form",
    { id: "create-chat", class: "card", novalidate: true, "aria-label": "New chat" },
    labelled("Title", h("input", { name: "title", maxlength: 300, autocomplete: "off", placeholder: "New chat" })),
    labelled("Agent", agent),
    h("div", { class: "inline" }, h("button", { type: "submit" }, "Start chat")),
    formSummary(),
  );
  onSubmit(form, async () => {
    const title = field(form, "title").trim();
    const agentId = field(form, "agentId");
    const chat = await ctx.client.chats.create({ ...(title ? { title } : {}), ...(agentId ? { agentId } : {}) });
    ctx.navigate(chatHref(chat.id));
  });
  root.append(h("h1", {}, "Chats"), form, list.element);
  void list.reload();
  ctx.client.agents
    .list({ limit: 100 })
    .then((page) => {
      for (const a of page.items) agent.append(h("option", { value: a.id }, a.name));
    })
    .catch((e: unknown) => ctx.showError(e));
  return list.stop;
};
