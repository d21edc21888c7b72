import {
  agentSchema,
  chatMessageSchema,
  chatSchema,
  createAgentBody,
  createChatBody,
  createChatMessageBody,
  createMcpServerBody,
  createProjectBody,
  idParams,
  mcpServerSchema,
  pageQuery,
  projectSchema,
  updateAgentBody,
  updateChatBody,
  updateMcpServerBody,
  updateProjectBody,
} from "@app/contracts";
import { pageResponse } from "../lib/pagination.js";
import type { ApiRoutes } from "../lib/registry.js";
import type { AgentsService } from "../services/agents.js";
import type { ChatsService } from "../services/chats.js";
import type { McpServersService } from "../services/mcp-servers.js";
import type { ProjectsService } from "../services/projects.js";
import { crudRoutes } from "./crud.js";

/** JSON CRUD for projects: /api/projects[/:id]. */
export function projectRoutes(api: ApiRoutes, projects: ProjectsService): void {
  crudRoutes(
    api,
    { path: "/api/projects", tag: "projects", noun: "project", view: projectSchema, create: createProjectBody, update: updateProjectBody },
    projects,
  );
}

/** JSON CRUD for agents: /api/agents[/:id]. */
export function agentRoutes(api: ApiRoutes, agents: AgentsService): void {
  crudRoutes(
    api,
    { path: "/api/agents", tag: "agents", noun: "agent", view: agentSchema, create: createAgentBody, update: updateAgentBody },
    agents,
  );
}

/** JSON CRUD for MCP servers: /api/mcp-servers[/:id] (secrets and tokens are never returned). */
export function mcpServerRoutes(api: ApiRoutes, servers: McpServersService): void {
  crudRoutes(
    api,
    {
      path: "/api/mcp-servers",
      tag: "mcp",
      noun: "MCP server",
      view: mcpServerSchema,
      create: createMcpServerBody,
      update: updateMcpServerBody,
    },
    servers,
  );
}

/** JSON CRUD for chats, plus their messages: /api/chats[/:id], /api/chats/:id/messages. */
export function chatRoutes(api: ApiRoutes, chats: ChatsService): void {
  crudRoutes(
    api,
    { path: "/api/chats", tag: "chats", noun: "chat", view: chatSchema, create: createChatBody, update: updateChatBody },
    chats,
  );
  api.json(
    "get",
    "/api/chats/:id/messages",
    { tag: "chats", summary: "List a chat's messages (oldest first)", paginated: true },
    {
      auth: true,
      params: idParams,
      query: pageQuery,
      response: chatMessageSchema.array(),
      handler: async (ctx) => pageResponse(await chats.listMessages(ctx.userId, ctx.params.id, ctx.query), ctx),
    },
  );
  api.json(
    "post",
    "/api/chats/:id/messages",
    { tag: "chats", summary: "Add a message to a chat" },
    {
      auth: true,
      params: idParams,
      body: createChatMessageBody,
      status: 201,
      response: chatMessageSchema,
      handler: (ctx) => chats.addMessage(ctx.userId, ctx.params.id, ctx.body),
    },
  );
}
