import type { TaskEventView } from "@app/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, memoryStorage } from "../src/index.js";
import { cookieFetch, freshEmail, signUpSignedIn, startStack } from "./helpers.js";

// The API replays at most SSE_MAX_RESUME_EVENTS stored events; a resume point further back gets
// `event: resync` (apps/api/src/tasks/routes.ts). The stream tells the caller, moves its resume
// point to the newest event and goes on live.
let env: Awaited<ReturnType<typeof startStack>>;
beforeAll(async () => {
  env = await startStack({ SSE_MAX_RESUME_EVENTS: "3" });
});
afterAll(async () => {
  await env?.stop();
});

describe("a resume point older than the API replays", () => {
  it("calls onResync instead of dropping the gap silently, then delivers live events", async () => {
    const jar = cookieFetch();
    const client = createClient({ baseUrl: env.stack.baseUrl, storage: memoryStorage(), fetch: jar.fetch });
    await signUpSignedIn(client, { email: freshEmail("resync"), password: "correct horse battery", name: "Resync" });
    const task = await client.tasks.create({ title: "long" });
    for (const text of ["1", "2", "3", "4", "5", "6"]) await client.tasks.addMessage(task.id, text);

    const events: TaskEventView[] = [];
    let resyncs = 0;
    let resynced!: () => void;
    const resync = new Promise<void>((r) => {
      resynced = r;
    });
    let live!: () => void;
    const arrived = new Promise<void>((r) => {
      live = r;
    });
    const stream = client.tasks.stream(task.id, {
      lastEventId: "0",
      onEvent: (event) => {
        events.push(event);
        if (event.type === "message.created" && (event.data as { text: string }).text === "live") live();
      },
      onResync: () => {
        resyncs += 1;
        resynced();
      },
    });
    await resync;
    expect(stream.lastEventId).toMatch(/^\d+$/);
    await client.tasks.addMessage(task.id, "live");
    await arrived;
    stream.close();
    expect(resyncs).toBe(1);
    // Nothing from the gap was replayed; the refetch (the list route) is the caller's.
    const texts = events.filter((e) => e.type === "message.created").map((e) => (e.data as { text: string }).text);
    expect(texts).toEqual(["live"]);
    const page = await client.tasks.messages(task.id, { limit: 100 });
    expect(page.items.map((m) => m.text)).toEqual(["1", "2", "3", "4", "5", "6", "live"]);
  });
});
