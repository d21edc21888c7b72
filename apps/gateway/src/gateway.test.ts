import http, { type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { createGateway } from "./gateway.js";

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

function upstream(name: string): Server {
  const server = http.createServer((req, res) => {
    if (req.url === "/api/stream") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
      return; // left open: the test reads the first event while the stream is still running
    }
    res.writeHead(200, { "content-type": "application/json", "set-auth-jwt": "jwt-from-upstream", "set-cookie": "x.session_token=v" });
    res.end(JSON.stringify({ name, url: req.url, forwardedFor: req.headers["x-forwarded-for"] ?? null }));
  });
  const wss = new WebSocketServer({ server });
  wss.on("connection", (socket, req) => socket.send(`${name}:${req.url}`));
  return server;
}

const servers: Server[] = [];
let base = "";
let identityUrls: string[] = [];

beforeAll(async () => {
  const id1 = upstream("identity-1");
  const id2 = upstream("identity-2");
  const api = upstream("api");
  servers.push(id1, id2, api);
  identityUrls = [await listen(id1), await listen(id2)];
  const gateway = createGateway({ identity: identityUrls, api: [await listen(api)], logger: pino({ level: "silent" }) });
  servers.push(gateway);
  base = await listen(gateway);
});

afterAll(() => {
  for (const s of servers) s.closeAllConnections();
  for (const s of servers) s.close();
});

describe("gateway", () => {
  it("routes /api/auth/* to identity (round robin) and passes auth headers through", async () => {
    const names = new Set<string>();
    for (let i = 0; i < 4; i += 1) {
      const res = await fetch(`${base}/api/auth/get-session`, { method: "POST" });
      expect(res.headers.get("set-auth-jwt")).toBe("jwt-from-upstream");
      expect(res.headers.get("set-cookie")).toContain("session_token");
      const body = (await res.json()) as { name: string; url: string; forwardedFor: string | null };
      expect(body.url).toBe("/api/auth/get-session");
      expect(body.forwardedFor).toBeTruthy();
      names.add(body.name);
    }
    expect(names).toEqual(new Set(["identity-1", "identity-2"]));
  });

  it("routes the rest of /api/* to the API, and nothing else", async () => {
    const res = await fetch(`${base}/api/tasks?limit=2`);
    expect(((await res.json()) as { name: string }).name).toBe("api");
    const authLike = await fetch(`${base}/api/authors`);
    expect(((await authLike.json()) as { name: string }).name).toBe("api");
    const other = await fetch(`${base}/elsewhere`);
    expect(other.status).toBe(404);
    expect(((await other.json()) as { error: { code: string } }).error.code).toBe("not_found");
  });

  it("routes the authorization server's discovery to identity and the protected resource metadata to the API", async () => {
    const nameAt = async (path: string) => ((await (await fetch(`${base}${path}`)).json()) as { name: string }).name;
    expect(await nameAt("/.well-known/oauth-authorization-server")).toMatch(/^identity-/);
    expect(await nameAt("/.well-known/openid-configuration")).toMatch(/^identity-/);
    expect(await nameAt("/.well-known/oauth-protected-resource/api/mcp")).toBe("api");
    expect((await fetch(`${base}/.well-known/other`)).status).toBe(404);
    expect((await fetch(`${base}/.well-known/openid-configuration-x`)).status).toBe(404);
  });

  it("refuses ambiguous paths instead of letting the upstream normalise them", async () => {
    // Raw requests: fetch would normalise the dot segments before sending them.
    const raw = (path: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        http
          .get({ host: "127.0.0.1", port: new URL(base).port, path }, (res) => {
            let body = "";
            res.on("data", (d: Buffer) => {
              body += d.toString();
            });
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
          })
          .on("error", reject);
      });
    for (const path of [
      "/api//auth/get-session",
      "/api/auth/../tasks",
      "/api/auth/%2e%2e/tasks",
      "/api/auth%2fget-session",
      "/api/auth/./jwks",
      "/api/auth\\..\\tasks",
    ]) {
      const res = await raw(path);
      expect(res.status, path).toBe(400);
      expect((JSON.parse(res.body) as { error: { code: string } }).error.code).toBe("bad_request");
    }
  });

  it("sets forwarding headers itself instead of passing the client's through", async () => {
    const res = await fetch(`${base}/api/tasks`, { headers: { "x-forwarded-for": "6.6.6.6", "x-forwarded-host": "evil.example" } });
    const body = (await res.json()) as { forwardedFor: string };
    expect(body.forwardedFor).not.toContain("6.6.6.6");
  });

  it("streams SSE without buffering", async () => {
    const controller = new AbortController();
    const res = await fetch(`${base}/api/stream`, { signal: controller.signal });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toContain("data: first");
    controller.abort();
  });

  it("proxies WebSocket upgrades to the API", async () => {
    const ws = new WebSocket(`${base.replace("http", "ws")}/api/ws?token=abc`);
    const message = await new Promise<string>((resolve, reject) => {
      ws.once("message", (data) => resolve(String(data)));
      ws.once("error", reject);
    });
    ws.close();
    expect(message).toBe("api:/api/ws?token=abc");
  });

  it("answers 503 in the error envelope when an upstream is down", async () => {
    const gateway = createGateway({ identity: ["http://127.0.0.1:1"], api: ["http://127.0.0.1:1"], logger: pino({ level: "silent" }) });
    servers.push(gateway);
    const url = await listen(gateway);
    const res = await fetch(`${url}/api/auth/jwks`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ ok: false, error: { code: "service_unavailable", message: "upstream service unavailable" } });
  });
});
