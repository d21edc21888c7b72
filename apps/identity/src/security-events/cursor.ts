import { isStorableTime } from "@app/contracts";
import { AppError } from "@app/http-kit";

/** Where a page of events ends: the last event's time and id (events are ordered by both, newest first). */
export interface EventCursor {
  createdAt: Date;
  id: string;
}

/** Ids are UUIDs; anything longer, or holding control characters or lone surrogates, was not made here. */
const ID_SHAPE = /^[A-Za-z0-9_-]{1,100}$/;

/** The opaque cursor of the page after `last`: base64url of `[ISO time, id]`. */
export function encodeEventCursor(last: EventCursor): string {
  return Buffer.from(JSON.stringify([last.createdAt.toISOString(), last.id]), "utf8").toString("base64url");
}

/** Reads a cursor {@link encodeEventCursor} made; 400 `bad_request` for anything else. */
export function decodeEventCursor(cursor: string | undefined): EventCursor | undefined {
  if (cursor === undefined) return undefined;
  const refuse = () => new AppError("bad_request", "cursor is not valid: pass the nextCursor of the previous page");
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw refuse();
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw refuse();
  }
  if (!Array.isArray(value) || value.length !== 2) throw refuse();
  const [time, id] = value as unknown[];
  if (typeof time !== "string" || typeof id !== "string" || !ID_SHAPE.test(id)) throw refuse();
  const createdAt = new Date(time);
  if (!isStorableTime(createdAt.getTime()) || createdAt.toISOString() !== time) throw refuse();
  return { createdAt, id };
}
