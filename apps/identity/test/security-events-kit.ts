import type { PrismaClient } from "@app/db";
import type { Express } from "express";
import request from "supertest";
import { expect } from "vitest";
import { ORIGIN } from "./kit.js";

// What the security event tests (security-events-*.test.ts) share: requests with a user agent of
// their own, and reads of the `auth_event` and `webhook_message` rows the actions wrote.

/** The user agent every request of these tests sends: the events must carry it. */
export const AGENT = "security-events-test/1.0 (identity)";

/** An `auth_event` row. */
export interface EventRow {
  id: string;
  type: string;
  userId: string | null;
  actorId: string | null;
  ip: string | null;
  userAgent: string | null;
  outcome: string;
  method: string | null;
  detail: Record<string, unknown> | null;
  createdAt: Date;
}

/** A request to `app` from the web app's origin with {@link AGENT}, asking for JSON. */
export function send(app: Express, method: "get" | "post", path: string, body?: object, cookie = "") {
  const req = request(app)[method](path).set("origin", ORIGIN).set("user-agent", AGENT).set("accept", "application/json");
  if (cookie) req.set("cookie", cookie);
  return body === undefined ? req : req.send(body);
}

/** The events of `userId` (null: of nobody), oldest first, optionally of some types only. */
export async function eventsOf(prisma: PrismaClient, userId: string | null, types?: string[]): Promise<EventRow[]> {
  const rows = await prisma.authEvent.findMany({
    where: { userId, ...(types ? { type: { in: types } } : {}) },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  return rows as EventRow[];
}

/** The one event of `type` of `userId`; fails when there is none or more than one. */
export async function oneEvent(prisma: PrismaClient, userId: string | null, type: string): Promise<EventRow> {
  const rows = await eventsOf(prisma, userId, [type]);
  expect(
    rows.map((r) => r.type),
    `${type} events of ${userId}`,
  ).toEqual([type]);
  return rows[0] as EventRow;
}

/** Asserts an event came from this test's request: its user agent, a loopback IP, the outcome. */
export function expectFromRequest(event: EventRow, outcome: "success" | "failure" = "success"): void {
  expect(event.userAgent).toBe(AGENT);
  expect(event.ip).toMatch(/127\.0\.0\.1|::1/);
  expect(event.outcome).toBe(outcome);
}

/** The `data` of the webhook messages of `type` whose data matches `where` (every key equal). */
export async function webhooks(
  prisma: PrismaClient,
  type: string,
  where: Record<string, unknown> = {},
): Promise<Record<string, unknown>[]> {
  const rows = await prisma.webhookMessage.findMany({ where: { type }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  return rows
    .map((row) => row.payload as { type: string; timestamp: string; data: Record<string, unknown> })
    .filter((payload) => {
      expect(payload.type).toBe(type);
      expect(Date.parse(payload.timestamp)).not.toBeNaN();
      return Object.entries(where).every(([key, value]) => payload.data[key] === value);
    })
    .map((payload) => payload.data);
}

/** Every `auth_event` and `webhook_message` row written since `since`, as JSON text (for "never a secret" checks). */
export async function storedSince(prisma: PrismaClient, since: Date): Promise<string> {
  const rows = await prisma.$queryRaw<{ row: string }[]>`
    SELECT row_to_json(e)::text AS row FROM auth_event e WHERE e.created_at >= ${since}
    UNION ALL SELECT row_to_json(m)::text FROM webhook_message m WHERE m.created_at >= ${since}`;
  return rows.map((r) => r.row).join("\n");
}

/** The secret half of a session cookie (`name=<id>.<secret>`). */
export const secretOf = (cookie: string) => cookie.split("=")[1]?.split(".")[1] ?? "";
