import http, { type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGateway } from "./gateway.js";

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

const REFUSED = JSON.stringify({ ok: false, error: { code: "unsupported_media_type", message: "file type is not allowed" } });

/**
 * Answers like apps/api/src/uploads/multipart.ts refusing a file by its type: 415 as soon as the first
 * body bytes arrive, the rest read and discarded; the gateway asks for `connection: close`, so
 * the upstream closes its side right after the answer.
 */
let answered: () => void = () => undefined;
const api = http.createServer((req, res) => {
  req.once("data", () => {
    req.resume();
    res.writeHead(415, { "content-type": "application/json", "content-length": Buffer.byteLength(REFUSED) }).end(REFUSED);
    answered();
  });
});

/** A body sent in two parts, the second once the upstream has answered. */
function slowBody(size: number): ReadableStream<Uint8Array> {
  const answer = new Promise<void>((resolve) => {
    answered = resolve;
  });
  return new ReadableStream({
    async pull(controller) {
      controller.enqueue(new Uint8Array(1024).fill(120));
      await answer;
      controller.enqueue(new Uint8Array(size).fill(120));
      controller.close();
    },
  });
}

const servers: Server[] = [];
let base = "";

beforeAll(async () => {
  const apiUrl = await listen(api);
  const gateway = createGateway({
    identity: [apiUrl],
    api: [apiUrl],
    logger: pino({ level: "silent" }),
    linger: { maxBytes: 256 * 1024, maxMs: 5_000 },
  });
  servers.push(api, gateway);
  base = await listen(gateway);
});

afterAll(() => {
  for (const s of servers) s.closeAllConnections();
  for (const s of servers) s.close();
});

describe("an upstream answering before the request body ended", () => {
  it("reaches the client as a complete 415, never as a reset, over 200 multipart uploads", async () => {
    const outcomes = new Map<string, number>();
    for (let i = 0; i < 200; i += 1) {
      const form = new FormData();
      form.append("file", new Blob(["x".repeat(4096)], { type: "application/x-msdownload" }), "a.exe");
      const outcome = await fetch(`${base}/api/uploads`, { method: "POST", body: form }).then(
        async (res) => `${res.status} ${((await res.json()) as { error: { code: string } }).error.code}`,
        (error: Error & { cause?: { code?: string } }) => `network_error ${error.cause?.code ?? error.message}`,
      );
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
    expect(Object.fromEntries(outcomes)).toEqual({ "415 unsupported_media_type": 200 });
  });

  it("keeps the client's connection and reads the rest of a body sent after the answer", async () => {
    for (let i = 0; i < 20; i += 1) {
      const res = await fetch(`${base}/api/uploads`, {
        method: "POST",
        headers: { "content-type": "application/octet-stream", "content-length": String(1024 + 64 * 1024) },
        body: slowBody(64 * 1024),
        duplex: "half",
      } as RequestInit);
      expect(res.status).toBe(415);
      expect(res.headers.get("connection")).not.toBe("close");
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unsupported_media_type");
    }
  });

  it("answers a refused body larger than the gateway reads with connection: close, without hanging", async () => {
    const size = 4 * 1024 * 1024;
    const res = await fetch(`${base}/api/uploads`, {
      method: "POST",
      headers: { "content-type": "application/octet-stream", "content-length": String(1024 + size) },
      body: slowBody(size),
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(415);
    expect(res.headers.get("connection")).toBe("close");
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unsupported_media_type");
  });
});
