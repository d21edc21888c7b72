import { z } from "zod";
import { chatSchema } from "./chats.js";
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from "./pagination.js";
import { organizationIdSchema, projectSchema } from "./projects.js";
import { createTaskBody, createTaskMessageBody, taskMessageSchema, taskSchema } from "./tasks.js";

/**
 * The API as an MCP server for agents (apps/api/src/mcp-server/): its resource, the scopes its
 * access tokens carry, and every tool's input and output. The inbound side; mcp.ts describes the
 * API as an MCP client of other servers.
 */

/** Where the MCP server answers, under the base URL; also its OAuth resource identifier (`aud`). */
export const MCP_RESOURCE_PATH = "/api/mcp";
/** Where its protected resource metadata (RFC 9728) is: the well-known prefix, then the resource's path. */
export const MCP_RESOURCE_METADATA_PATH = `/.well-known/oauth-protected-resource${MCP_RESOURCE_PATH}`;

/** The scopes of an MCP access token: `mcp:read` lists and reads, `mcp:write` creates and adds. */
export const MCP_SCOPES = ["mcp:read", "mcp:write"] as const;
export type McpScope = (typeof MCP_SCOPES)[number];

/** Protected resource metadata (RFC 9728 section 2), as GET {@link MCP_RESOURCE_METADATA_PATH} answers it. */
export const protectedResourceMetadataSchema = z.object({
  resource: z.string(),
  authorization_servers: z.array(z.string()),
  scopes_supported: z.array(z.string()),
  bearer_methods_supported: z.array(z.literal("header")),
  resource_name: z.string(),
  resource_documentation: z.string().optional(),
});
export type ProtectedResourceMetadata = z.infer<typeof protectedResourceMetadataSchema>;

/**
 * Body of POST /api/mcp: one JSON-RPC 2.0 message of the Model Context Protocol (or a batch, which
 * older protocol versions allow). The MCP SDK checks the rest and answers JSON-RPC errors itself.
 */
export const mcpRequestBody = z
  .union([z.looseObject({ jsonrpc: z.literal("2.0") }), z.array(z.looseObject({ jsonrpc: z.literal("2.0") })).min(1)])
  .describe("a JSON-RPC 2.0 message (or batch) of the Model Context Protocol");
export type McpRequestBody = z.infer<typeof mcpRequestBody>;

/** An id as the API issues them: opaque text without control characters. */
const id = (what: string) =>
  z
    .string()
    .min(1)
    .max(100)
    .regex(/^[^\p{Cc}\p{Cs}]+$/u, `${what} contains characters an id never has`)
    .describe(`the ${what}`);
const limit = z.number().int().min(1).max(MAX_PAGE_LIMIT).default(DEFAULT_PAGE_LIMIT).describe(`page size (1..${MAX_PAGE_LIMIT})`);
const cursor = z.string().min(1).max(200).optional().describe("the nextCursor of the previous page");
const nextCursor = z.string().nullable().describe("cursor of the next page; null on the last");
const page = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), nextCursor });

/** Input of `list_projects`: the caller's own projects, or one organization's (its members only). */
export const listProjectsInput = z.object({
  organizationId: organizationIdSchema.optional().describe("list this organization's projects instead of your own"),
  limit,
  cursor,
});
/** Input of `list_tasks` and `list_chats`: a project's (every member's in an organization's), or your own outside organizations. */
export const projectContentInput = z.object({
  projectId: id("project id").optional().describe("list this project's rows instead of your own outside organizations"),
  limit,
  cursor,
});
/** Input of `get_task`: the task and the first page of its messages (oldest first). */
export const getTaskInput = z.object({
  taskId: id("task id"),
  messagesLimit: limit.describe("how many of its messages to include, oldest first"),
  messagesCursor: cursor.describe("the nextMessagesCursor of a previous answer"),
});
/** Input of `create_task`: the fields of POST /api/tasks. */
export const createTaskInput = z.object(createTaskBody.shape);
/** Input of `add_task_message`: a task and the text of POST /api/tasks/:id/messages. */
export const addTaskMessageInput = z.object({ taskId: id("task id"), ...createTaskMessageBody.shape });
/** Input of `search`: words matched in names, titles and descriptions, within one scope of the lists. */
export const searchInput = z
  .object({
    query: z
      .string()
      .trim()
      .min(1, "query is required")
      .max(200, "query is too long")
      .regex(/^[^\p{Cc}\p{Cs}]+$/u, "query contains control characters")
      .describe("text to find (case-insensitive)"),
    projectId: id("project id").optional().describe("search this project's tasks and chats"),
    organizationId: organizationIdSchema.optional().describe("search this organization's projects"),
    limit: z.number().int().min(1).max(50).default(10).describe("most results of each kind (1..50)"),
  })
  .refine((s) => !(s.projectId && s.organizationId), { message: "give projectId or organizationId, not both", path: ["organizationId"] });

/** Output of `get_task`. */
export const getTaskOutput = z.object({
  task: taskSchema,
  messages: z.array(taskMessageSchema),
  nextMessagesCursor: nextCursor,
});
/** Output of `search`: each kind newest first; a kind outside the scope is empty. */
export const searchOutput = z.object({
  projects: z.array(projectSchema),
  tasks: z.array(taskSchema),
  chats: z.array(chatSchema),
});

/** What a tool is: its scope, what it says to the agent, and its input and output. */
export interface McpToolContract {
  scope: McpScope;
  title: string;
  description: string;
  input: z.ZodObject;
  output: z.ZodObject;
}

/** Every tool of the API's MCP server. The tool list shows a token only the tools its scopes allow. */
export const MCP_TOOLS = {
  list_projects: {
    scope: "mcp:read",
    title: "List projects",
    description: "Lists your projects (newest first), or with organizationId the projects of an organization you are a member of.",
    input: listProjectsInput,
    output: page(projectSchema),
  },
  list_tasks: {
    scope: "mcp:read",
    title: "List tasks",
    description: "Lists tasks (newest first): with projectId that project's, otherwise your own tasks outside organizations.",
    input: projectContentInput,
    output: page(taskSchema),
  },
  get_task: {
    scope: "mcp:read",
    title: "Read a task",
    description: "Reads one task with its messages (oldest first, paged).",
    input: getTaskInput,
    output: getTaskOutput,
  },
  list_chats: {
    scope: "mcp:read",
    title: "List chats",
    description: "Lists chats (newest first): with projectId that project's, otherwise your own chats outside organizations.",
    input: projectContentInput,
    output: page(chatSchema),
  },
  search: {
    scope: "mcp:read",
    title: "Search",
    description:
      "Finds projects, tasks and chats whose name, title or description contains the query. Scope: your own (outside organizations) by default; with projectId that project's tasks and chats; with organizationId that organization's projects.",
    input: searchInput,
    output: searchOutput,
  },
  create_task: {
    scope: "mcp:write",
    title: "Create a task",
    description: "Creates a task (status pending unless given), in projectId when given (a project you may write in).",
    input: createTaskInput,
    output: taskSchema,
  },
  add_task_message: {
    scope: "mcp:write",
    title: "Add a message to a task",
    description: "Adds a text message to a task you may write; everyone following the task sees it at once.",
    input: addTaskMessageInput,
    output: taskMessageSchema,
  },
} as const satisfies Record<string, McpToolContract>;
export type McpToolName = keyof typeof MCP_TOOLS;
