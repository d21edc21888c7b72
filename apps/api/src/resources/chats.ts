import type { ChatMessageView, ChatRole, ChatView, CreateChatBody, CreateChatMessageBody, PageQuery, UpdateChatBody } from "@app/contracts";
import type { Prisma, PrismaClient } from "@app/db";
import { newId } from "../lib/ids.js";
import { keysetPage, type Page } from "../lib/pagination.js";
import { assertAgent, assertProject, defined, notFound } from "../lib/refs.js";

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

/** Chats and their messages, of one user. */
export class ChatsService {
  constructor(private readonly prisma: PrismaClient) {}

  async list(userId: string, query: PageQuery): Promise<Page<ChatView>> {
    const page = await keysetPage(query, ({ take, before }) =>
      this.prisma.chat.findMany({ where: { userId, ...(before ? { id: { lt: before } } : {}) }, orderBy: { id: "desc" }, take }),
    );
    return { ...page, items: page.items.map(chatView) };
  }

  async create(userId: string, body: CreateChatBody): Promise<ChatView> {
    await assertProject(this.prisma, userId, body.projectId);
    await assertAgent(this.prisma, userId, body.agentId);
    const row = await this.prisma.chat.create({
      data: { id: newId(), userId, title: body.title ?? "New chat", projectId: body.projectId ?? null, agentId: body.agentId ?? null },
    });
    return chatView(row);
  }

  async get(userId: string, id: string): Promise<ChatView> {
    const row = await this.prisma.chat.findFirst({ where: { id, userId } });
    if (!row) throw notFound("chat");
    return chatView(row);
  }

  async update(userId: string, id: string, body: UpdateChatBody): Promise<ChatView> {
    await assertProject(this.prisma, userId, body.projectId);
    await assertAgent(this.prisma, userId, body.agentId);
    const { count } = await this.prisma.chat.updateMany({ where: { id, userId }, data: defined(body) });
    if (count === 0) throw notFound("chat");
    return this.get(userId, id);
  }

  async remove(userId: string, id: string): Promise<void> {
    const { count } = await this.prisma.chat.deleteMany({ where: { id, userId } });
    if (count === 0) throw notFound("chat");
  }

  /** Messages of a chat, oldest first (keyset on id ascending). */
  async listMessages(userId: string, chatId: string, query: PageQuery): Promise<Page<ChatMessageView>> {
    await this.get(userId, chatId);
    const page = await keysetPage(query, ({ take, before: after }) =>
      this.prisma.chatMessage.findMany({ where: { chatId, ...(after ? { id: { gt: after } } : {}) }, orderBy: { id: "asc" }, take }),
    );
    return { ...page, items: page.items.map(chatMessageView) };
  }

  async addMessage(userId: string, chatId: string, body: CreateChatMessageBody): Promise<ChatMessageView> {
    await this.get(userId, chatId);
    const [row] = await this.prisma.$transaction([
      this.prisma.chatMessage.create({ data: { id: newId(), chatId, role: body.role ?? "user", content: body.content } }),
      this.prisma.chat.update({ where: { id: chatId }, data: { updatedAt: new Date() } }),
    ]);
    return chatMessageView(row);
  }
}
