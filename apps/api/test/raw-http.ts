/** Raw HTTP helpers for hostile requests that fetch cannot make (repeated headers) and WebSocket refusals. */
import http from "node:http";
import WebSocket from "ws";

/** A response read in full. */
export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json(): unknown;
}

/**
 * Sends one request with header pairs exactly as given (repeated names stay repeated, as two
 * header lines), on `agent` (keep-alive) when given.
 */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Array<[string, string]>; body?: string | Buffer; agent?: http.Agent } = {},
): Promise<RawResponse> {
  const flat: string[] = ["host", new URL(url).host];
  for (const [name, value] of options.headers ?? []) flat.push(name, value);
  if (options.body !== undefined) flat.push("content-length", String(Buffer.byteLength(options.body)));
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? "GET", headers: flat, agent: options.agent ?? false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) as unknown });
      });
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

/** What a WebSocket upgrade attempt ended with: the refusal's status and body, or an open socket (closed at once). */
export function tryUpgrade(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.on("unexpected-response", (_req, res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    socket.on("open", () => {
      socket.close();
      resolve({ status: 101, body: "" });
    });
    socket.on("error", (error) => {
      if (!/Unexpected server response/.test(error.message)) reject(error);
    });
  });
}
