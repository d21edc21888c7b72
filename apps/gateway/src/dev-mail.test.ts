import { type ChildProcess, spawn } from "node:child_process";
import http, { type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGateway, devMailUpstream } from "./gateway.js";

const ENTRY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../dist/server.js");
const silent = pino({ level: "silent" });
const servers: Server[] = [];
const children: ChildProcess[] = [];

function listen(server: Server, port = 0): Promise<string> {
  servers.push(server);
  return new Promise((resolve) =>
    server.listen(port, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

/** Stands in for the launcher's mailbox server: echoes the path it got. */
let mailbox = "";
let upstream = "";
beforeAll(async () => {
  mailbox = await listen(
    http.createServer((req, res) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ mailbox: req.url }))),
  );
  upstream = await listen(http.createServer((_req, res) => res.writeHead(200).end("{}")));
});
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
  for (const s of servers) s.closeAllConnections();
  for (const s of servers) s.close();
});

describe("/dev/mail", () => {
  it("is proxied to the mailbox outside production, with everything under it and nothing beside it", async () => {
    const base = await listen(createGateway({ identity: [upstream], api: [upstream], logger: silent, devMail: mailbox }));
    for (const p of ["/dev/mail", "/dev/mail?format=json", "/dev/mail/3"]) {
      const res = await fetch(`${base}${p}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ mailbox: p });
    }
    expect((await fetch(`${base}/dev/mailbox`)).status).toBe(404);
    expect((await fetch(`${base}/dev/mail`, { method: "POST" })).status).toBe(404);
  });

  /** A GET with `host` as its Host header (fetch sends the URL's own). */
  function getWithHost(base: string, host: string, path = "/dev/mail?format=json"): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const { hostname, port } = new URL(base);
      http
        .get({ hostname, port, path, headers: { host } }, (res) => {
          let body = "";
          res.on("data", (c: Buffer) => {
            body += c.toString();
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        })
        .on("error", reject);
    });
  }

  it("answers only the base URL's host and loopback names, so a DNS-rebinding page cannot read it", async () => {
    const base = await listen(
      createGateway({ identity: [upstream], api: [upstream], logger: silent, devMail: mailbox, baseUrl: "http://auth.example.test:3000" }),
    );
    const port = new URL(base).port;
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, "auth.example.test:3000", "AUTH.example.test"]) {
      const res = await getWithHost(base, host);
      expect(res.status, host).toBe(200);
      // The mailbox gets its own address as Host, the only kind it answers (tools/stack/src/dev-mail.ts).
      expect(JSON.parse(res.body), host).toEqual({ mailbox: "/dev/mail?format=json" });
    }
    for (const host of [
      `rebind.attacker.example:${port}`,
      "localhost.attacker.example",
      "127.0.0.1.nip.io",
      "a b",
      "x@localhost",
      "localhost/evil",
    ]) {
      const res = await getWithHost(base, host);
      expect(res.status, host).toBe(403);
      expect((JSON.parse(res.body) as { error: { code: string } }).error.code, host).toBe("forbidden");
    }
    // Other routes still answer whatever the Host.
    expect((await getWithHost(base, "rebind.attacker.example", "/api/x")).status).toBe(200);
  });

  it("is absent without a mailbox", async () => {
    const base = await listen(createGateway({ identity: [upstream], api: [upstream], logger: silent }));
    const res = await fetch(`${base}/dev/mail`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("not_found");
  });

  it("is never mounted in production, whatever DEV_MAIL_URL says", () => {
    expect(devMailUpstream({ NODE_ENV: "production", DEV_MAIL_URL: mailbox })).toBeUndefined();
    expect(devMailUpstream({ NODE_ENV: "development" })).toBeUndefined();
    expect(devMailUpstream({ NODE_ENV: "development", DEV_MAIL_URL: mailbox })).toBe(mailbox);
    expect(devMailUpstream({ DEV_MAIL_URL: mailbox })).toBe(mailbox);
  });

  async function gatewayProcess(nodeEnv: string): Promise<string> {
    const probe = http.createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const child = spawn(process.execPath, [ENTRY], {
      env: {
        PATH: process.env.PATH,
        NODE_ENV: nodeEnv,
        PORT: String(port),
        IDENTITY_UPSTREAMS: upstream,
        API_UPSTREAMS: upstream,
        DEV_MAIL_URL: mailbox,
        LOG_FORMAT: "json",
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    children.push(child);
    await new Promise<void>((resolve) => child.stdout?.on("data", (c: Buffer) => c.toString().includes('"listening"') && resolve()));
    return `http://127.0.0.1:${port}`;
  }

  it("the gateway process serves it with DEV_MAIL_URL in development and answers 404 in production", async () => {
    expect((await fetch(`${await gatewayProcess("development")}/dev/mail`)).status).toBe(200);
    const production = await fetch(`${await gatewayProcess("production")}/dev/mail`);
    expect(production.status).toBe(404);
    expect(((await production.json()) as { error: { code: string } }).error.code).toBe("not_found");
  }, 20_000);
});
