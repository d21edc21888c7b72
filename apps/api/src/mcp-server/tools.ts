import { MCP_TOOLS, type McpScope, type McpToolName } from "@app/contracts";
import { type AppError, isAppError } from "@app/http-kit";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import type { z } from "zod";
import type { Page } from "../lib/pagination.js";
import type { ChatsService } from "../resources/chats.js";
import type { ProjectsService } from "../resources/projects.js";
import type { TasksService } from "../tasks/service.js";

/** The services the tools call: the same ones, with the same rules, as the REST routes. */
export interface McpToolDeps {
  tasks: TasksService;
  projects: ProjectsService;
  chats: ChatsService;
  logger: Logger;
  /** Maps dependency failures (database down, a value PostgreSQL refuses) to coded errors, as the error handler does. */
  classify(error: unknown): AppError | undefined;
}

type Tools = typeof MCP_TOOLS;
type Handler<K extends McpToolName> = (userId: string, input: z.output<Tools[K]["input"]>) => Promise<z.input<Tools[K]["output"]>>;

/** What the server tells an agent on initialize. */
const INSTRUCTIONS =
  "Projects, tasks and chats of the signed-in user and of the organizations they belong to. Lists are newest first and paged: pass nextCursor back as cursor. Without projectId or organizationId, lists and search cover the user's own rows outside organizations; list_projects with organizationId, then projectId, reaches an organization's.";

const page = <T>(p: Page<T>) => ({ items: p.items, nextCursor: p.nextCursor ?? null });

/** Each tool on the services (tasks/service.ts, resources/): every access decision is theirs. */
function handlers(deps: McpToolDeps): { [K in McpToolName]: Handler<K> } {
  const { tasks, projects, chats } = deps;
  return {
    list_projects: async (userId, { organizationId, limit, cursor }) =>
      page(await projects.list(userId, { organizationId, limit, cursor })),
    list_tasks: async (userId, { projectId, limit, cursor }) => page(await tasks.list(userId, { projectId, limit, cursor })),
    list_chats: async (userId, { projectId, limit, cursor }) => page(await chats.list(userId, { projectId, limit, cursor })),
    get_task: async (userId, { taskId, messagesLimit, messagesCursor }) => {
      const task = await tasks.get(userId, taskId);
      const messages = await tasks.listMessages(userId, taskId, { limit: messagesLimit, cursor: messagesCursor });
      return { task, messages: messages.items, nextMessagesCursor: messages.nextCursor ?? null };
    },
    // Each kind through its list, with the list's scope: a project's content, an organization's projects, or the user's own.
    search: async (userId, { query, projectId, organizationId, limit }) => {
      const none = Promise.resolve({ items: [] as never[], nextCursor: undefined });
      const [p, t, c] = await Promise.all([
        projectId ? none : projects.list(userId, { organizationId, limit }, query),
        organizationId ? none : tasks.list(userId, { projectId, limit }, query),
        organizationId ? none : chats.list(userId, { projectId, limit }, query),
      ]);
      return { projects: p.items, tasks: t.items, chats: c.items };
    },
    create_task: (userId, input) => tasks.create(userId, input),
    add_task_message: (userId, { taskId, text }) => tasks.addMessage(userId, taskId, text),
  };
}

/** A refusal or failure as the agent reads it: a tool result with `isError` (MCP tool execution errors). */
function toolError(deps: McpToolDeps, name: string, error: unknown): CallToolResult {
  const known = isAppError(error) ? error : deps.classify(error);
  if (!known || known.status >= 500) {
    deps.logger.error({ err: known?.cause ?? error, tool: name }, "MCP tool failed");
  }
  const text =
    known && known.status < 500 ? `${known.code}: ${known.message}` : `${known?.code ?? "internal_error"}: the tool failed; retry later`;
  return { isError: true, content: [{ type: "text", text }] };
}

/**
 * The MCP server of one request (the transport is stateless: each POST gets its own), for one
 * user, with the tools the token's scopes allow: the tool list shows no other, and a call of another
 * is refused before it reaches the server (routes.ts). A tool answers its data both as structured
 * content (checked against its output schema) and as JSON text for clients that read only text.
 */
export function mcpServerFor(deps: McpToolDeps, userId: string, scopes: ReadonlySet<McpScope>): McpServer {
  const server = new McpServer({ name: "api", title: "Projects, tasks and chats", version: "1.0.0" }, { instructions: INSTRUCTIONS });
  const run = handlers(deps) as Record<McpToolName, (userId: string, input: unknown) => Promise<Record<string, unknown>>>;
  for (const name of Object.keys(MCP_TOOLS) as McpToolName[]) {
    const tool = MCP_TOOLS[name];
    if (!scopes.has(tool.scope)) continue;
    const readOnly = tool.scope === "mcp:read";
    server.registerTool(
      name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.input,
        outputSchema: tool.output,
        annotations: { readOnlyHint: readOnly, destructiveHint: false, idempotentHint: readOnly, openWorldHint: false },
      },
      async (input: unknown): Promise<CallToolResult> => {
        try {
          const data = await run[name](userId, input);
          return { content: [{ type: "text", text: JSON.stringify(data) }], structuredContent: data };
        } catch (error) {
          return toolError(deps, name, error);
        }
      },
    );
  }
  return server;
}
