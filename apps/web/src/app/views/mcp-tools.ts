import { ApiError } from "@app/client";
import type { McpTool, McpToolResult } from "@app/contracts";
import type { AppContext } from "../context.js";
import { h, replace } from "../dom.js";
import { formSummary, labelled, onSubmit } from "../forms.js";
import { describeError } from "../messages.js";
import { reportSessionEnd } from "../session.js";
import { argumentsTemplate, parseArguments, summariseSchema } from "./mcp-format.js";

/** A tool's result: its text parts, its structured content as JSON, and a failure said as one. */
export function resultView(result: McpToolResult): HTMLElement {
  const parts: HTMLElement[] = [];
  for (const part of result.content) {
    if (part.type === "text" && typeof part.text === "string") parts.push(h("pre", { class: "output tool-text" }, part.text));
    else parts.push(h("p", { class: "muted" }, `A ${part.type} part (not shown here).`));
  }
  if (result.structuredContent !== undefined) {
    parts.push(
      h("p", { class: "who" }, "Structured content"),
      h("pre", { class: "output tool-structured" }, JSON.stringify(result.structuredContent, null, 2)),
    );
  }
  if (!parts.length) parts.push(h("p", { class: "muted" }, "The tool answered nothing."));
  return h(
    "div",
    { class: `tool-result${result.isError ? " tool-failed" : ""}`, "data-is-error": String(result.isError) },
    h("p", { class: "who" }, result.isError ? "The tool reported a failure" : "Result"),
    ...parts,
  );
}

/** One tool: what it takes, and a form that calls it with JSON arguments. */
function toolItem(ctx: AppContext, serverId: string, tool: McpTool, onProblem: () => void): HTMLElement {
  const args = summariseSchema(tool.inputSchema);
  const textarea = h("textarea", { name: "arguments", rows: Math.min(8, args.length + 2), spellcheck: false, class: "mono" });
  textarea.value = argumentsTemplate(tool.inputSchema);
  const result = h("div", { class: "tool-output", "aria-live": "polite" });
  const form = h(
    "form",
    { class: "tool-call", novalidate: true, "aria-label": `Call ${tool.name}` },
    labelled(`Arguments for ${tool.name} (JSON)`, textarea),
    h("div", { class: "inline" }, h("button", { type: "submit", class: "small" }, `Call ${tool.name}`)),
    formSummary(),
  );
  onSubmit(form, async () => {
    const parsed = parseArguments(textarea.value);
    if (!parsed.ok) {
      const slot = form.querySelector<HTMLElement>('[data-issue-for="arguments"]');
      if (slot) slot.textContent = parsed.problem;
      textarea.setAttribute("aria-invalid", "true");
      textarea.focus();
      return;
    }
    replace(result, h("p", { class: "muted" }, "Calling…"));
    try {
      replace(result, resultView(await ctx.client.mcpServers.callTool(serverId, tool.name, parsed.value)));
    } catch (error) {
      replace(result);
      // The server refused this connection: the page says so and the row turns to "Reconnect".
      if (error instanceof ApiError && error.code === "mcp_reconnect_required") {
        ctx.showError(error);
        onProblem();
        return;
      }
      throw error;
    }
  });
  return h(
    "li",
    { class: "tool", "data-tool": tool.name },
    h("strong", { class: "mono" }, tool.name),
    tool.description ? h("p", { class: "muted" }, tool.description) : null,
    args.length
      ? h(
          "ul",
          { class: "tool-args", "aria-label": `Arguments of ${tool.name}` },
          ...args.map((a) =>
            h(
              "li",
              {},
              h("span", { class: "mono" }, `${a.name}: ${a.type}`),
              a.required ? " (required)" : " (optional)",
              a.description ? ` — ${a.description}` : "",
            ),
          ),
        )
      : h("p", { class: "muted" }, "Takes no arguments."),
    form,
    result,
  );
}

/**
 * The tools of a connected server, loaded when the panel opens. A failure (for example 409
 * mcp_reconnect_required) is a sentence in the panel; `onProblem` lets the page refresh the
 * server's status after it, or after a call refused for that reason.
 */
export function toolsPanel(ctx: AppContext, serverId: string, onProblem: () => void): HTMLElement {
  const body = h("div", { class: "tools-body" }, h("p", { class: "muted" }, "Loading tools…"));
  const panel = h("details", { class: "tools", "data-server": serverId }, h("summary", {}, "Tools"), body);
  let loaded = false;
  panel.addEventListener("toggle", () => {
    if (!panel.open || loaded) return;
    loaded = true;
    ctx.client.mcpServers
      .tools(serverId)
      .then((tools) => {
        replace(
          body,
          tools.length
            ? h("ul", { class: "tool-list" }, ...tools.map((tool) => toolItem(ctx, serverId, tool, onProblem)))
            : h("p", { class: "muted" }, "This server offers no tools."),
        );
        body.dataset.loaded = "true";
      })
      .catch((error: unknown) => {
        loaded = false;
        if (reportSessionEnd(error)) return;
        replace(body, h("p", { class: "form-error", role: "alert" }, describeError(error)));
        onProblem();
      });
  });
  return panel;
}
