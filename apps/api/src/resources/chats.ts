import type {
  ChatMessageView,
  ChatRole,
  ChatView,
  CreateChatBody,
  CreateChatMessageBody,
  PageQuery,
  ProjectContentQuery,
  UpdateChatBody,
} from "@app/contracts";
import type { Prisma, PrismaClient } from "@app/db";
import { newId } from "../lib/ids.js";
import { keysetPage, type Page } from "../lib/pagination.js";
import { defined, notFound } from "../lib/refs.js";
import { containsText } from "../lib/text-match.js";
import type { Action } from "../organizations/membership.js";
import { type Places, placeOf, WITH_PLACE } from "../organizations/places.js";

/** The public view of a chat row. */
export function chatView(c: Prisma.ChatModel): ChatView {
  return {
    id: c.id,
    title: c.title,
    projectId: c.projectId,
    agentId: c.agentId,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

/** The public view of a chat message row. */
export function chatMessageView(m: Prisma.ChatMessageModel): ChatMessageView {
  return { id: m.id, chatId: m.chatId, role: m.role as ChatRole, content: m.content, createdAt: m.createdAt.toISOString() };
}

/** Chats outside organizations (no project, or a project of the user's own). */
const OUTSIDE_ORGANIZATIONS: Prisma.ChatWhereInput = { OR: [{ projectId: null }, { project: { organizationId: null } }] };

/**
 * Chats and their messages: in an organization's project, every member's to read and write;
 * otherwise their author's alone (organizations/places.ts). A chat's agent must be one the user
 * may read.
 */
export class ChatsService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly places: Places,
  ) {}

  /** `?projectId=`: that project's chats; else the user's own outside organizations. With `match`, those whose title contains it. */
  async list(userId: string, query: ProjectContentQuery, match?: string): Promise<Page<ChatView>> {
    let where: Prisma.ChatWhereInput = { userId, ...OUTSIDE_ORGANIZATIONS };
    if (query.projectId) {
      const at = await this.places.inProject(userId, query.projectId, "read");
      where = at.organizationId === null ? { projectId: query.projectId, userId } : { projectId: query.projectId };
    }
    if (match !== undefined) where = { AND: [where, { title: containsText(match) }] };
    const page = await keysetPage(query, ({ take, before }) =>
      this.prisma.chat.findMany({ where: { ...where, ...(before ? { id: { lt: before } } : {}) }, orderBy: { id: "desc" }, take }),
    );
    return { ...page, items: page.items.map(chatView) };
  }

  async create(userId: string, body: CreateChatBody): Promise<ChatView> {
    await this.places.create(userId, body.projectId, await this.places.agentRef(body.agentId));
    const row = await this.prisma.chat.create({
      data: { id: newId(), userId, title: body.title ?? "New chat", projectId: body.projectId ?? null, agentId: body.agentId ?? null },
    });
    return chatView(row);
  }

  /** The chat row, when the user may `action` it (404 / 403 otherwise). */
  async #authorized(userId: string, id: string, action: Action, body?: UpdateChatBody) {
    const row = await this.prisma.chat.findUnique({ where: { id }, include: WITH_PLACE });
    if (!row) throw notFound("chat");
    const agent = await this.places.agentRef(body?.agentId);
    await this.places.content(userId, placeOf(row), action, "chat", { projectId: body?.projectId }, agent);
    return row;
  }

  async get(userId: string, id: string): Promise<ChatView> {
    return chatView(await this.#authorized(userId, id, "read"));
  }

  async update(userId: string, id: string, body: UpdateChatBody): Promise<ChatView> {
    await this.#authorized(userId, id, "write", body);
    const { count } = await this.prisma.chat.updateMany({ where: { id }, data: defined(body) });
    if (count === 0) throw notFound("chat");
    return chatView(await this.prisma.chat.findUniqueOrThrow({ where: { id } }));
  }

  async remove(userId: string, id: string): Promise<void> {
    await this.#authorized(userId, id, "write");
    const { count } = await this.prisma.chat.deleteMany({ where: { id } });
    if (count === 0) throw notFound("chat");
  }

  /** Messages of a chat, oldest first (keyset on id ascending). */
  async listMessages(userId: string, chatId: string, query: PageQuery): Promise<Page<ChatMessageView>> {
    await this.#authorized(userId, chatId, "read");
    const page = await keysetPage(query, ({ take, before: after }) =>
      this.prisma.chatMessage.findMany({ where: { chatId, ...(after ? { id: { gt: after } } : {}) }, orderBy: { id: "asc" }, take }),
    );
    return { ...page, items: page.items.map(chatMessageView) };
  }

  async addMessage(userId: string, chatId: string, body: CreateChatMessageBody): Promise<ChatMessageView> {
    await this.#authorized(userId, chatId, "write");
    const [row] = await this.prisma.$transaction([
      this.prisma.chatMessage.create({ data: { id: newId(), chatId, role: body.role ?? "user", content: body.content } }),
      this.prisma.chat.update({ where: { id: chatId }, data: { updatedAt: new Date() } }),
    ]);
    return chatMessageView(row);
  }
}
