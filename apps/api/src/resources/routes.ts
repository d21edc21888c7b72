import {
  agentSchema,
  chatMessageSchema,
  chatSchema,
  createAgentBody,
  createChatBody,
  createChatMessageBody,
  createProjectBody,
  idParams,
  pageQuery,
  projectContentQuery,
  projectListQuery,
  projectSchema,
  updateAgentBody,
  updateChatBody,
  updateProjectBody,
} from "@app/contracts";
import { type AnyRoute, defineRoute, type Guard } from "@app/http-kit";
import { jsonBody } from "../entry/body.js";
import { requireAuth } from "../entry/stream-auth.js";
import { pageResponse } from "../lib/pagination.js";
import type { AgentsService } from "./agents.js";
import type { ChatsService } from "./chats.js";
import { crudRoutes } from "./crud.js";
import type { ProjectsService } from "./projects.js";

/** What a list of a project's content says about `?projectId=`. */
const IN_PROJECT = "`?projectId=` a project's (every member's in an organization's), else your own outside organizations";

/**
 * JSON CRUD for projects: /api/projects[/:id]. `?organizationId=` and `organizationId` in the body
 * name an organization's projects (organizations/membership.ts: members read, admins manage,
 * owners delete).
 */
export function projectRoutes(bearer: Guard, projects: ProjectsService): AnyRoute[] {
  return crudRoutes(
    bearer,
    {
      path: "/api/projects",
      tag: "projects",
      noun: "project",
      view: projectSchema,
      create: createProjectBody,
      update: updateProjectBody,
      listQuery: projectListQuery,
      listSummary: "List projects (newest first): `?organizationId=` an organization's (its members only), else your own",
    },
    projects,
  );
}

/** JSON CRUD for agents: /api/agents[/:id]. */
export function agentRoutes(bearer: Guard, agents: AgentsService): AnyRoute[] {
  return crudRoutes(
    bearer,
    {
      path: "/api/agents",
      tag: "agents",
      noun: "agent",
      view: agentSchema,
      create: createAgentBody,
      update: updateAgentBody,
      listQuery: projectContentQuery,
      listSummary: `List agents (newest first): ${IN_PROJECT}`,
    },
    agents,
  );
}

/** JSON CRUD for chats, plus their messages: /api/chats[/:id], /api/chats/:id/messages. */
export function chatRoutes(bearer: Guard, chats: ChatsService): AnyRoute[] {
  return [
    ...crudRoutes(
      bearer,
      {
        path: "/api/chats",
        tag: "chats",
        noun: "chat",
        view: chatSchema,
        create: createChatBody,
        update: updateChatBody,
        listQuery: projectContentQuery,
        listSummary: `List chats (newest first): ${IN_PROJECT}`,
      },
      chats,
    ),
    defineRoute({
      method: "get",
      path: "/api/chats/:id/messages",
      tag: "chats",
      summary: "List a chat's messages (oldest first)",
      paginated: true,
      params: idParams,
      query: pageQuery,
      response: chatMessageSchema.array(),
      guards: [bearer],
      handler: async (ctx) => pageResponse(await chats.listMessages(requireAuth(ctx.req).userId, ctx.params.id, ctx.query), ctx),
    }),
    defineRoute({
      method: "post",
      path: "/api/chats/:id/messages",
      tag: "chats",
      summary: "Add a message to a chat",
      params: idParams,
      body: createChatMessageBody,
      status: 201,
      response: chatMessageSchema,
      guards: [bearer, jsonBody],
      handler: (ctx) => chats.addMessage(requireAuth(ctx.req).userId, ctx.params.id, ctx.body),
    }),
  ];
}
