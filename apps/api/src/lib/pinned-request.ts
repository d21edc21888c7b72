import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import type { PinnedTarget } from "./outbound-url.js";
import { MAX_UPSTREAM_JSON_BYTES } from "./read-capped.js";

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
  const maxBytes = options.maxBytes ?? MAX_UPSTREAM_JSON_BYTES;
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
