import type { McpServerView } from "@app/contracts";
import { deleteButton } from "../confirm.js";
import type { AppContext, View } from "../context.js";
import { field, h, replace } from "../dom.js";
import { formSummary, labelled, onSubmit } from "../forms.js";
import { pagedList } from "../paged-list.js";
import { authorizeHref, readMcpReturn, STATUS_TEXT } from "./mcp-format.js";
import { toolsPanel } from "./mcp-tools.js";

function statusLine(server: McpServerView): HTMLElement {
  const expires =
    server.status === "connected" && server.expiresAt
      ? h("span", { class: "muted expires" }, `Access expires at ${new Date(server.expiresAt).toLocaleString()} (renewed automatically)`)
      : null;
  const tone = server.status === "connected" ? "status-completed" : server.status === "needs_reconnect" ? "status-failed" : "";
  return h(
    "div",
    { class: "inline mcp-status" },
    h("span", { class: `status ${tone}`, "data-status": server.status }, STATUS_TEXT[server.status] ?? "not connected"),
    expires,
  );
}

/**
 * Connect (or Reconnect): a plain link, so the browser navigates to the API's authorize route
 * with its session cookie (docs/mcp.md); the API sends it on to the server's authorization page
 * and back here with `?mcp=connected|error`.
 */
function connectLink(ctx: AppContext, server: McpServerView): HTMLElement | null {
  if (server.status === "connected") return null;
  const text = server.status === "needs_reconnect" ? "Reconnect" : "Connect";
  return h(
    "a",
    { class: "button", href: authorizeHref(ctx.client.baseUrl, server.id), "aria-label": `${text} MCP server ${server.name}` },
    text,
  );
}

/**
 * MCP servers: add one by name and URL, connect it (the server's own sign-in page, then back
 * here), see its status, list its tools and call them with JSON arguments, delete it.
 */
export const mcpView: View = (ctx, root) => {
  const list = pagedList<McpServerView>({
    id: "mcp-list",
    empty: "No MCP servers yet: add one below.",
    load: (cursor) => ctx.client.mcpServers.list({ limit: 20, ...(cursor ? { cursor } : {}) }),
    row,
  });
  const refresh = (id: string) => {
    ctx.client.mcpServers
      .get(id)
      .then((server) => list.update(id, server))
      .catch(() => undefined);
  };
  function row(server: McpServerView): HTMLElement {
    return h(
      "li",
      { class: "item mcp-server", "data-id": server.id, "data-status": server.status },
      h("div", { class: "grow" }, h("strong", {}, server.name), h("p", { class: "muted url" }, server.url), statusLine(server)),
      h(
        "div",
        { class: "inline" },
        connectLink(ctx, server),
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
      server.status === "connected" ? toolsPanel(ctx, server.id, () => refresh(server.id)) : null,
    );
  }
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
  const outcome = h("p", { id: "mcp-return", class: "mcp-return", hidden: true });
  // The servers come first (the page people return to after Connect), then adding and the how-to.
  const connect = h(
    "section",
    { id: "mcp-connect", class: "card", "aria-labelledby": "mcp-connect-title" },
    h("h2", { id: "mcp-connect-title" }, "Connect a server"),
    h(
      "p",
      { class: "muted" },
      "Press Connect on a server: the server's own sign-in page opens, and you come back here once it lets this account in. Its tools are listed below the server.",
    ),
  );
  root.append(h("h1", {}, "MCP servers"), outcome, h("h2", {}, "Your servers"), list.element, form, connect);
  showReturn(ctx, outcome);
  void list.reload();
  return list.stop;
};

/**
 * The API's redirect back (`#/mcp?mcp=connected|error&serverId=&code=`, see router.ts) as a
 * sentence; the query then leaves the address bar so a reload does not repeat it.
 */
function showReturn(ctx: AppContext, outcome: HTMLElement): void {
  const query = location.hash.split("?")[1] ?? "";
  const first = readMcpReturn(query);
  if (!first) return;
  history.replaceState(null, "", `${location.pathname}#/mcp`);
  const show = (text: string) => {
    outcome.setAttribute("role", first.ok ? "status" : "alert");
    outcome.className = `mcp-return ${first.ok ? "notice-ok" : "form-error"}`;
    outcome.dataset.outcome = first.ok ? "connected" : "error";
    replace(outcome, text);
    outcome.hidden = false;
  };
  // One sentence, said once: with the server's name when it can be read.
  if (!first.serverId) {
    show(first.sentence);
    return;
  }
  ctx.client.mcpServers
    .get(first.serverId)
    .then((server) => show(readMcpReturn(query, server.name)?.sentence ?? first.sentence))
    .catch(() => show(first.sentence));
}
