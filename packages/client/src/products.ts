import {
  type AgentView,
  agentSchema,
  type ChatMessageView,
  type ChatView,
  type CreateAgentBody,
  type CreateChatBody,
  type CreateChatMessageBody,
  type CreateMcpServerBody,
  type CreateProjectBody,
  chatMessageSchema,
  chatSchema,
  type McpServerView,
  type McpTool,
  type McpToolResult,
  mcpServerSchema,
  mcpToolResultSchema,
  mcpToolSchema,
  type ProjectView,
  projectSchema,
  type UpdateAgentBody,
  type UpdateChatBody,
  type UpdateMcpServerBody,
  type UpdateProjectBody,
} from "@app/contracts";
import type { z } from "zod";
import { type Http, jsonInit } from "./http.js";
import { list, type Page, type PageRequest } from "./resources.js";

/** The five JSON routes of one user-owned resource (apps/api/src/resources/crud.ts). */
export interface CrudApi<V, C, U> {
  /** One page, newest first; `nextCursor` comes from the `x-next-cursor` header. */
  list(page?: PageRequest): Promise<Page<V>>;
  create(body: C): Promise<V>;
  get(id: string): Promise<V>;
  update(id: string, body: U): Promise<V>;
  /** Deletes (204); another user's or an unknown id is a 404 {@link ApiError}. */
  remove(id: string): Promise<void>;
}

const enc = (value: string) => encodeURIComponent(value);

/** Builds a {@link CrudApi} over a collection path and its view schema. */
export function crudApi<S extends z.ZodType, C, U>(http: Http, path: string, view: S): CrudApi<z.output<S>, C, U> {
  return {
    list: (page) => list(http, view, path, page),
    create: async (body) => (await http.json(view, path, jsonInit("POST", body))).data,
    get: async (id) => (await http.json(view, `${path}/${enc(id)}`)).data,
    update: async (id, body) => (await http.json(view, `${path}/${enc(id)}`, jsonInit("PATCH", body))).data,
    remove: async (id) => {
      const response = await http.sendOk(`${path}/${enc(id)}`, { method: "DELETE" });
      await response.body?.cancel().catch(() => undefined);
    },
  };
}

/** A page of projects: the caller's own, or with `organizationId` that organization's (members only, else 404). */
export interface ProjectListRequest extends PageRequest {
  organizationId?: string;
}

/**
 * Projects: the caller's own, or an organization's (`organizationId` on create and list), which
 * every member of it reads and writes; membership is read by the API on each request.
 */
export interface ProjectsApi extends CrudApi<ProjectView, CreateProjectBody, UpdateProjectBody> {
  list(page?: ProjectListRequest): Promise<Page<ProjectView>>;
}
export type AgentsApi = CrudApi<AgentView, CreateAgentBody, UpdateAgentBody>;
/** MCP servers, and the tools of a connected one. */
export interface McpServersApi extends CrudApi<McpServerView, CreateMcpServerBody, UpdateMcpServerBody> {
  /** The server's tools; a server that must be authorized again is a 409 `mcp_reconnect_required`. */
  tools(serverId: string): Promise<McpTool[]>;
  /** Calls one tool with JSON arguments and returns its result. */
  callTool(serverId: string, name: string, args?: Record<string, unknown>): Promise<McpToolResult>;
}

/** Chats, and their messages (oldest first). */
export interface ChatsApi extends CrudApi<ChatView, CreateChatBody, UpdateChatBody> {
  messages(chatId: string, page?: PageRequest): Promise<Page<ChatMessageView>>;
  /** Adds a message (`role` defaults to "user"). */
  addMessage(chatId: string, body: CreateChatMessageBody): Promise<ChatMessageView>;
}

/** The product resources: projects, agents, chats and MCP servers. */
export function productApis(http: Http): { projects: ProjectsApi; agents: AgentsApi; chats: ChatsApi; mcpServers: McpServersApi } {
  const chats = crudApi<typeof chatSchema, CreateChatBody, UpdateChatBody>(http, "/api/chats", chatSchema);
  return {
    projects: {
      ...crudApi<typeof projectSchema, CreateProjectBody, UpdateProjectBody>(http, "/api/projects", projectSchema),
      list: ({ organizationId, ...page } = {}) => list(http, projectSchema, "/api/projects", page, { organizationId }),
    },
    agents: crudApi(http, "/api/agents", agentSchema),
    mcpServers: {
      ...crudApi<typeof mcpServerSchema, CreateMcpServerBody, UpdateMcpServerBody>(http, "/api/mcp-servers", mcpServerSchema),
      tools: async (serverId) => (await http.json(mcpToolSchema.array(), `/api/mcp-servers/${enc(serverId)}/tools`)).data,
      callTool: async (serverId, name, args = {}) =>
        (
          await http.json(
            mcpToolResultSchema,
            `/api/mcp-servers/${enc(serverId)}/tools/${enc(name)}/call`,
            jsonInit("POST", { arguments: args }),
          )
        ).data,
    },
    chats: {
      ...chats,
      messages: (chatId, page) => list(http, chatMessageSchema, `/api/chats/${enc(chatId)}/messages`, page),
      addMessage: async (chatId, body) =>
        (await http.json(chatMessageSchema, `/api/chats/${enc(chatId)}/messages`, jsonInit("POST", body))).data,
    },
  };
}
