import type { McpServerView } from "@app/contracts";
import { deleteButton } from "../confirm.js";
import type { View } from "../context.js";
import { field, h } from "../dom.js";
import { formSummary, labelled, onSubmit } from "../forms.js";
import { pagedList } from "../paged-list.js";

const STATUS_TEXT: Record<McpServerView["status"], string> = {
  connected: "connected",
  needs_reconnect: "needs connecting again",
  not_connected: "not connected",
};

function status(server: McpServerView): string {
  return STATUS_TEXT[server.status] ?? "not connected";
}

/**
 * MCP servers: the list, an add form (name and URL) and delete. Connecting a server by its URL
 * alone (discovery, then sign-in with the server) gets its own section, `#mcp-connect`.
 */
export const mcpView: View = (ctx, root) => {
  const list = pagedList<McpServerView>(ctx, {
    id: "mcp-list",
    empty: "No MCP servers yet: add one above.",
    load: (cursor) => ctx.client.mcpServers.list({ limit: 20, ...(cursor ? { cursor } : {}) }),
    row: (server) =>
      h(
        "li",
        { class: "item", "data-id": server.id },
        h("div", { class: "grow" }, h("strong", {}, server.name), h("p", { class: "muted url" }, server.url)),
        h("span", { class: `status ${server.connected ? "status-completed" : ""}` }, status(server)),
        deleteButton(
          `Delete MCP server ${server.name}`,
          `Delete the MCP server “${server.name}”?`,
          async () => {
            await ctx.client.mcpServers.remove(server.id);
            list.remove(server.id);
            ctx.showNotice(`MCP server “${server.name}” deleted.`);
          },
          (e) => ctx.showError(e),
        ),
      ),
  });
  const form = h(
    "form",
    { id: "create-mcp", class: "card", novalidate: true, "aria-label": "Add an MCP server" },
    labelled("Name", h("input", { name: "name", required: true, maxlength: 200, autocomplete: "off" })),
    labelled("Server URL", h("input", { name: "url", type: "url", required: true, autocomplete: "off", inputmode: "url" }), {
      hint: "For example https://mcp.example.com/mcp",
    }),
    h("div", { class: "inline" }, h("button", { type: "submit" }, "Add server")),
    formSummary(),
  );
  onSubmit(form, async () => {
    const server = await ctx.client.mcpServers.create({ name: field(form, "name"), url: field(form, "url").trim() });
    form.reset();
    list.prepend(server);
  });
  // The connect-by-URL flow fills this section; until then it says what the page can do today.
  const connect = h(
    "section",
    { id: "mcp-connect", class: "card", "aria-labelledby": "mcp-connect-title" },
    h("h2", { id: "mcp-connect-title" }, "Connect a server"),
    h("p", { class: "muted" }, "Signing in to a server from here is not available yet. Servers added above are saved to your account."),
  );
  root.append(h("h1", {}, "MCP servers"), form, connect, h("h2", {}, "Your servers"), list.element);
  void list.reload();
  return list.stop;
};
