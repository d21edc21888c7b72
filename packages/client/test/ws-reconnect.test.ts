import type { TaskEventView } from "@app/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { createClient, memoryStorage, type WebSocketFactory } from "../src/index.js";
import { cookieFetch, freshEmail, signUpSignedIn, startStack } from "./helpers.js";

let env: Awaited<ReturnType<typeof startStack>>;
beforeAll(async () => {
  env = await startStack();
});
afterAll(async () => {
  await env?.stop();
});

/** Resolves once `predicate` holds, checked after each call of the returned `check`. */
function waiter(predicate: () => boolean): { check(): void; done: Promise<void> } {
  let resolve!: () => void;
  const done = new Promise<void>((r) => {
    resolve = r;
  });
  return { check: () => predicate() && resolve(), done };
}

describe("WebSocket reconnection", () => {
  it("reconnects after the connection drops and resumes from the last event id: nothing lost, nothing repeated", async () => {
    const sockets: WebSocket[] = [];
    // Node 20 has no global WebSocket; the `ws` package stands in, and the test keeps each socket to cut it.
    const webSocket: WebSocketFactory = (url) => {
      const socket = new WebSocket(url);
      sockets.push(socket);
      return socket;
    };
    const client = createClient({ baseUrl: env.stack.baseUrl, storage: memoryStorage(), fetch: cookieFetch().fetch, webSocket });
    await signUpSignedIn(client, { email: freshEmail("ws"), password: "correct horse battery", name: "Reconnector" });
    const task = await client.tasks.create({ title: "followed" });

    const events: TaskEventView[] = [];
    const retries: number[] = [];
    let reconnected = 0;
    let waiting = waiter(() => false);
    const socket = await client.connectSocket({
      onMessage: (message) => {
        if (message.type === "event") events.push(message.event);
        waiting.check();
      },
      onReconnecting: (attempt) => retries.push(attempt),
      onReconnected: () => {
        reconnected += 1;
        waiting.check();
      },
      reconnect: { initialMs: 20, maxMs: 200 },
    });
    const texts = () => events.map((e) => (e.data as { text: string }).text);

    waiting = waiter(() => events.length === 1);
    socket.subscribe(task.id, "0");
    await client.tasks.addMessage(task.id, "before the drop");
    await waiting.done;

    // The network drops: the socket dies without a close handshake.
    waiting = waiter(() => reconnected === 1 && events.length === 3);
    sockets[0]?.terminate();
    await client.tasks.addMessage(task.id, "while away 1");
    await client.tasks.addMessage(task.id, "while away 2");
    await waiting.done;
    expect(retries[0]).toBe(0);
    expect(sockets).toHaveLength(2);
    expect(socket.lastEventId(task.id)).toBe(events[2]?.id);

    waiting = waiter(() => events.length === 4);
    await client.tasks.addMessage(task.id, "after the return");
    await waiting.done;
    expect(texts()).toEqual(["before the drop", "while away 1", "while away 2", "after the return"]);
    socket.close();
  });

  it("with reconnect off, a drop ends the socket with onClose", async () => {
    const sockets: WebSocket[] = [];
    const webSocket: WebSocketFactory = (url) => {
      const s = new WebSocket(url);
      sockets.push(s);
      return s;
    };
    const client = createClient({ baseUrl: env.stack.baseUrl, storage: memoryStorage(), fetch: cookieFetch().fetch, webSocket });
    await signUpSignedIn(client, { email: freshEmail("ws"), password: "correct horse battery", name: "No Retry" });
    let closed!: (code: number) => void;
    const closedWith = new Promise<number>((r) => {
      closed = r;
    });
    await client.connectSocket({ onMessage: () => undefined, onClose: (code) => closed(code), reconnect: false });
    sockets[0]?.terminate();
    expect(await closedWith).toBe(1006);
    expect(sockets).toHaveLength(1);
  });
});
