import { describe, expect, it } from "vitest";
import { readSse, SseParser } from "../src/index.js";

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

describe("SseParser", () => {
  it("dispatches on a blank line and joins data lines", () => {
    const parser = new SseParser();
    expect(parser.push("event: delta\ndata: a\ndata: b\n")).toEqual([]);
    expect(parser.push("\n")).toEqual([{ event: "delta", data: "a\nb" }]);
  });

  it("handles lines split across chunks, CRLF split between chunks, comments and a BOM", () => {
    const parser = new SseParser();
    const events = [
      ...parser.push("\uFEFF: heartbeat\r"),
      ...parser.push("\nid: 4"),
      ...parser.push("2\r\nevent: message.created\r\nda"),
      ...parser.push('ta: {"x":1}\r'),
      ...parser.push("\n\r\n"),
    ];
    expect(events).toEqual([{ id: "42", event: "message.created", data: '{"x":1}' }]);
  });

  it("reports retry-only blocks with an empty event name and names data-only blocks 'message'", () => {
    const parser = new SseParser();
    expect(parser.push("retry: 3000\n\ndata:plain\n\n")).toEqual([
      { event: "", data: "", retry: 3000 },
      { event: "message", data: "plain" },
    ]);
  });

  it("ignores malformed retry values and unknown fields", () => {
    const parser = new SseParser();
    expect(parser.push("retry: soon\nfoo: bar\ndata: x\n\n")).toEqual([{ event: "message", data: "x" }]);
  });
});

describe("readSse", () => {
  it("reads events from a byte stream, including a multi-byte character split across chunks", async () => {
    const bytes = new TextEncoder().encode("data: é\n\n");
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 7));
        controller.enqueue(bytes.slice(7));
        controller.close();
      },
    });
    const events = [];
    for await (const event of readSse(stream)) events.push(event);
    expect(events).toEqual([{ event: "message", data: "é" }]);
  });

  it("yields nothing for a stream of comments", async () => {
    const events = [];
    for await (const event of readSse(streamOf([": a\n\n", ": b\n\n"]))) events.push(event);
    expect(events).toEqual([]);
  });
});
