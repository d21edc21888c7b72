import { z } from "zod";

/**
 * The PostgreSQL NOTIFY channel on which identity announces key set changes and the API listens
 * (docs/key-set-events.md): a touchpoint between the services outside HTTP, so it is part of the
 * contract like any route.
 */
export const KEY_SET_CHANNEL = "auth_key_set";

/** Most kids one key set event lists (a NOTIFY payload must stay under 8000 bytes). */
export const KEY_SET_EVENT_MAX_KIDS = 100;

/** The payload of a {@link KEY_SET_CHANNEL} notification: what changed, never key material. */
export const keySetEventSchema = z.object({
  event: z.enum(["created", "retired", "rotated"]),
  kids: z.array(z.string()).max(KEY_SET_EVENT_MAX_KIDS),
});
export type KeySetEvent = z.infer<typeof keySetEventSchema>;
