import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import type { PinnedTarget } from "./url-policy.js";

/** Largest body read from another server unless a caller says otherwise (an OAuth token answer fits). */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;

/** What a pinned request answered: the status and the body, or undefined when it was over the cap. */
export interface PinnedResponse {
  status: number;
  body: string | undefined;
}

/** Options of {@link pinnedPost}. */
export interface PinnedPostOptions {
  headers: Record<string, string>;
  body: string;
  /** Whole exchange, connect to last byte (default 10 s). */
  timeoutMs?: number;
  /** Largest body read (default 64 KiB); a larger one is cut off and reported as undefined. */
  maxBytes?: number;
}

/**
 * A `lookup` that answers every query with the one address that was checked, whatever name is
 * asked: the socket can only connect there. Handles both callback shapes (`all: true` is used by
 * Node's happy-eyeballs connect).
 */
export function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) {
      (callback as unknown as (err: null, addresses: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
    } else {
      callback(null, address, family);
    }
  };
}

/**
 * POSTs to a {@link PinnedTarget}: the TCP connection goes to the checked address (TLS still
 * verifies the certificate for the URL's host name), no connection reuse, no redirects followed,
 * a deadline on the whole exchange, and at most `maxBytes` of body read.
 */
export function pinnedPost(target: PinnedTarget, options: PinnedPostOptions): Promise<PinnedResponse> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const transport = target.url.protocol === "https:" ? https : http;
  return new Promise<PinnedResponse>((resolve, reject) => {
    const req = transport.request(target.url, {
      method: "POST",
      agent: false,
      lookup: pinnedLookup(target.address, target.family),
      headers: { ...options.headers, "content-length": String(Buffer.byteLength(options.body)) },
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
    req.on("error", reject);
    req.on("response", (res) => {
      const status = res.statusCode ?? 0;
      const declared = Number(res.headers["content-length"] ?? Number.NaN);
      if (declared > maxBytes) {
        res.destroy();
        return resolve({ status, body: undefined });
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.byteLength;
        if (size > maxBytes) {
          res.destroy();
          resolve({ status, body: undefined });
          return;
        }
        chunks.push(chunk);
      });
      res.on("error", reject);
      res.on("end", () => resolve({ status, body: Buffer.concat(chunks).toString("utf8") }));
    });
    req.end(options.body);
  });
}

/** A `fetch` as the MCP SDK takes it (`fetchFn`). */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** The body of a {@link pinnedFetch} answer went over its cap. */
export class ResponseTooLarge extends Error {
  constructor(maxBytes: number) {
    super(`response body is larger than ${maxBytes} bytes`);
    this.name = "ResponseTooLarge";
  }
}

/** Options of {@link pinnedFetch}. */
export interface PinnedFetchOptions {
  /** Checks and pins every URL (see OutboundUrlPolicy in ./url-policy.ts). */
  resolve: (url: string) => Promise<PinnedTarget>;
  /** Each exchange, connect to last byte (default 10 s). */
  timeoutMs?: number;
  /** Largest body streamed (default 64 KiB); past it the body stream errors with {@link ResponseTooLarge}. */
  maxBytes?: number;
  /** Called when a body goes over `maxBytes` (a streamed body's error may not reach the caller). */
  onTooLarge?: () => void;
}

const NULL_BODY_STATUS = new Set([101, 204, 205, 304]);

/**
 * A `fetch` whose every request goes through the outbound policy and {@link pinnedLookup}:
 * redirects are answered, never followed (the caller sees the 3xx), and the body is streamed (so
 * Server-Sent Events work) with a byte cap. This is the `fetchFn` handed to the MCP SDK's auth
 * helpers and its Streamable HTTP transport, so no SDK request can reach a private address.
 */
export function pinnedFetch(options: PinnedFetchOptions): FetchLike {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  return async (input, init = {}) => {
    const target = await options.resolve(input instanceof URL ? input.href : String(input));
    const body = init.body == null ? undefined : Buffer.from(await new Response(init.body).arrayBuffer());
    const headers: Record<string, string> = Object.fromEntries(new Headers(init.headers));
    if (body) headers["content-length"] = String(body.byteLength);
    const deadline = AbortSignal.timeout(options.timeoutMs ?? 10_000);
    const signal = init.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    const transport = target.url.protocol === "https:" ? https : http;
    return new Promise<Response>((resolve, reject) => {
      const req = transport.request(target.url, {
        method: init.method ?? "GET",
        agent: false,
        lookup: pinnedLookup(target.address, target.family),
        headers,
        signal,
      });
      req.on("error", reject);
      req.on("response", (res) => {
        const status = res.statusCode ?? 502;
        const answer = new Headers();
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) answer.append(res.rawHeaders[i] ?? "", res.rawHeaders[i + 1] ?? "");
        let size = 0;
        let open = true;
        const stream = new ReadableStream<Uint8Array>({
          start(controller) {
            const fail = (error: Error) => {
              if (!open) return;
              open = false;
              controller.error(error);
              res.destroy();
            };
            res.on("data", (chunk: Buffer) => {
              size += chunk.byteLength;
              if (size > maxBytes) {
                options.onTooLarge?.();
                return fail(new ResponseTooLarge(maxBytes));
              }
              if (open) controller.enqueue(new Uint8Array(chunk));
            });
            res.on("end", () => {
              if (open) controller.close();
              open = false;
            });
            res.on("error", fail);
            res.on("close", () => fail(new Error("connection closed before the body ended")));
          },
          cancel() {
            open = false;
            res.destroy();
          },
        });
        if (NULL_BODY_STATUS.has(status) || status < 200 || status > 599) {
          res.destroy();
          return resolve(new Response(null, { status: status < 200 || status > 599 ? 502 : status, headers: answer }));
        }
        resolve(new Response(stream, { status, statusText: res.statusMessage ?? "", headers: answer }));
      });
      req.end(body);
    });
  };
}
