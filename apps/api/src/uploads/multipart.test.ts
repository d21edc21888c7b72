import { mkdtemp, readdir, rm } from "node:fs/promises";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import type { AppError } from "@app/http-kit";
import express from "express";
import { describe, expect, it } from "vitest";
import { FileStore } from "./file-store.js";
import { isAllowedType, receiveMultipart, safeFilename } from "./multipart.js";

describe("multipart helpers", () => {
  it("matches allowed types exactly or by family wildcard", () => {
    expect(isAllowedType("image/png", ["image/*"])).toBe(true);
    expect(isAllowedType("IMAGE/PNG", ["image/png"])).toBe(true);
    expect(isAllowedType("text/html", ["text/plain", "image/*"])).toBe(false);
    expect(isAllowedType("imagex/png", ["image/*"])).toBe(false);
  });

  it("keeps only a safe base name", () => {
    expect(safeFilename("../../etc/passwd")).toBe("passwd");
    expect(safeFilename("C:\\Users\\me\\report.pdf")).toBe("report.pdf");
    expect(safeFilename('a"b\u0000c\nd.txt')).toBe("abcd.txt");
    expect(safeFilename(undefined)).toBe("file");
    expect(safeFilename("x".repeat(400))).toHaveLength(255);
  });
});

describe("receiveMultipart refusing a file", () => {
  it("answers only once the rest of the body arrived, so a closing connection resets nothing", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "multipart-"));
    const store = new FileStore(dir);
    await store.init();
    // Resolves when the server has refused the part by its head, with whether an answer had
    // started by then: the refusal unpipes the body from the parser (multipart.ts), which pauses
    // the request (a body this small never pauses it otherwise); what the refusal does at once
    // has run by the next turn.
    let refused: (answerStarted: boolean) => void = () => undefined;
    const refusal = new Promise<boolean>((resolve) => {
      refused = resolve;
    });
    const app = express();
    app.post("/upload", (req, res) => {
      req.once("pause", () => setImmediate(() => refused(res.headersSent)));
      receiveMultipart(req, store, { maxFileBytes: 1024, maxFiles: 1, allowedTypes: ["text/plain"] }).then(
        () => res.status(201).end(),
        (error: AppError) => res.status(error.status).json({ code: error.code }),
      );
    });
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const boundary = "b0undary";
      const head = `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.exe"\r\ncontent-type: application/x-msdownload\r\n\r\nMZ`;
      const rest = `${"x".repeat(512)}\r\n--${boundary}--\r\n`;
      // `connection: close` as the gateway sends it: Node closes the socket right after the answer.
      const outcome = await new Promise<{ answer: string; answeredBeforeRest: boolean; error?: string }>((resolve) => {
        let answer = "";
        let restSent = false;
        let answeredBeforeRest = false;
        let error: string | undefined;
        const socket = net.connect(port, "127.0.0.1", () => {
          socket.write(
            `POST /upload HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: multipart/form-data; boundary=${boundary}\r\ncontent-length: ${head.length + rest.length}\r\n\r\n${head}`,
          );
          // The refusal needs only the part's head; the rest follows once the server has refused, as
          // from a slow client.
          void refusal.then(() => {
            restSent = true;
            if (!socket.destroyed) socket.write(rest);
          });
        });
        socket.on("data", (chunk: Buffer) => {
          if (!answer && !restSent) answeredBeforeRest = true;
          answer += chunk.toString();
        });
        socket.on("error", (e: Error & { code?: string }) => {
          error = e.code ?? e.message;
        });
        socket.on("close", () => resolve({ answer, answeredBeforeRest, ...(error ? { error } : {}) }));
      });
      expect(await refusal).toBe(false);
      expect(outcome.answeredBeforeRest).toBe(false);
      expect(outcome.error).toBeUndefined();
      expect(outcome.answer).toMatch(/^HTTP\/1\.1 415 /);
      expect(outcome.answer).toContain('"code":"unsupported_media_type"');
      expect(await readdir(dir)).toEqual([".instances"]);
    } finally {
      server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
