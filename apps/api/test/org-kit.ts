/** Organizations for API tests: identity's rows written as its admin would, and JSON calls. */
import { randomUUID } from "node:crypto";
import { createDb, type Db } from "@app/db";
import { expect } from "vitest";
import type { TestApi } from "./helpers.js";

export type User = Awaited<ReturnType<TestApi["user"]>>;
export type Role = "owner" | "admin" | "member";

/** identity's tables as identity writes them (organizations, members, the deletion outbox). */
export interface Identity {
  db: Db;
  /** A new organization with these members. */
  organization(members: Array<[User, Role | string]>): Promise<string>;
  addMember(organizationId: string, user: User, role: Role | string): Promise<void>;
  removeMember(organizationId: string, user: User): Promise<void>;
  /** What identity's organization deletion does before the API's part: the outbox row and the NOTIFY. */
  deleteOrganization(organizationId: string, notify?: boolean): Promise<void>;
  /** True once the API marked its part of the deletion done. */
  apiDone(organizationId: string): Promise<boolean>;
  close(): Promise<void>;
}

/** Opens identity's side of the test database of `t`. */
export function identityOf(t: TestApi): Identity {
  if (!t.adminUrl) throw new Error("no database");
  const db = createDb(t.adminUrl, { max: 2 });
  const p = db.prisma;
  const addMember = async (organizationId: string, user: User, role: string) => {
    await p.member.create({ data: { id: randomUUID(), organizationId, userId: user.id, role } });
  };
  return {
    db,
    async organization(members) {
      const id = randomUUID();
      await p.organization.create({ data: { id, name: "Org", slug: `org-${id}` } });
      for (const [user, role] of members) await addMember(id, user, role);
      return id;
    },
    addMember,
    async removeMember(organizationId, user) {
      await p.member.deleteMany({ where: { organizationId, userId: user.id } });
    },
    async deleteOrganization(organizationId, notify = true) {
      await p.$transaction([
        p.$executeRaw`INSERT INTO organization_deletion (organization_id) VALUES (${organizationId})`,
        ...(notify ? [p.$executeRaw`SELECT pg_notify('auth_organization_deleted', ${JSON.stringify({ organizationId })})`] : []),
      ]);
    },
    async apiDone(organizationId) {
      const rows = await p.$queryRaw<Array<{ done: Date | null }>>`
        SELECT api_done_at AS done FROM organization_deletion WHERE organization_id = ${organizationId}`;
      return rows[0]?.done != null;
    },
    close: () => db.close(),
  };
}

/** An answer: status, the envelope's data or error code. */
export interface Answer<T> {
  status: number;
  data: T;
  code: string | undefined;
}

/** One JSON call as `u`. */
export async function call<T = { id: string }>(t: TestApi, u: User, method: string, path: string, body?: unknown): Promise<Answer<T>> {
  const res = await fetch(`${t.url}${path}`, {
    method,
    headers: { ...u.auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  const json = (text ? JSON.parse(text) : {}) as { ok?: boolean; data?: T; error?: { code: string } };
  return { status: res.status, data: (json.ok === true ? json.data : json) as T, code: json.error?.code };
}

/** A call whose status must be `status`; resolves with its data. */
export async function expectCall<T = { id: string }>(
  t: TestApi,
  u: User,
  method: string,
  path: string,
  status: number,
  body?: unknown,
): Promise<T> {
  const answer = await call<T>(t, u, method, path, body);
  expect(answer.status, `${method} ${path} → ${JSON.stringify(answer.data)}`).toBe(status);
  return answer.data;
}

/** Posts a task message with one text attachment (multipart); resolves with the attachment's id. */
export async function attach(t: TestApi, u: User, taskId: string, content: string): Promise<string> {
  const form = new FormData();
  form.append("text", "with a file");
  form.append("files", new Blob([content], { type: "text/plain" }), "notes.txt");
  const res = await fetch(`${t.url}/api/tasks/${taskId}/messages`, { method: "POST", headers: u.auth, body: form });
  expect(res.status, await res.clone().text()).toBe(201);
  const message = (await res.json()) as { attachments: Array<{ id: string }> };
  return message.attachments[0]?.id ?? "";
}
