import http, { type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGateway } from "./gateway.js";

// The Bearer scheme is case-insensitive (RFC 9110 §11.1): the gateway must not judge it, only pass
// the Authorization value through byte for byte, so the API's verifier (packages/auth-verify
// extractBearerToken) applies the one rule for every spelling. Only a repeated header is refused here.

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

/** Raw request: header lines exactly as given. */
function request(url: string, headers: Array<[string, string]>): Promise<{ status: number; body: string }> {
  const flat = ["host", new URL(url).host, ...headers.flat()];
  return new Promise((resolve, reject) => {
    http
      .request(url, { headers: flat, agent: false }, (res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => {
          body += chunk.toString("utf8");
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on("error", reject)
      .end();
  });
}

const servers: Server[] = [];
let base = "";

beforeAll(async () => {
  // The API stand-in echoes the Authorization value it received.
  const api = http.createServer((req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ authorization: req.headers.authorization ?? null }));
  });
  const identity = http.createServer((_req, res) => res.writeHead(204).end());
  servers.push(api, identity);
  const gateway = createGateway({ identity: [await listen(identity)], api: [await listen(api)], logger: pino({ level: "silent" }) });
  servers.push(gateway);
  base = await listen(gateway);
});

afterAll(() => {
  for (const s of servers) s.closeAllConnections();
  for (const s of servers) s.close();
});

describe("the gateway and the Bearer scheme", () => {
  it("passes every spelling of the scheme through unchanged, whitespace included", async () => {
    for (const value of ["Bearer a.b.c", "bearer a.b.c", "BEARER a.b.c", "BeArEr a.b.c", "bearer\ta.b.c", "bearer  a.b.c"]) {
      for (const path of ["/api/me", "/api/tasks/x/stream"]) {
        const res = await request(`${base}${path}`, [["authorization", value]]);
        expect(res.status, value).toBe(200);
        expect(JSON.parse(res.body), value).toEqual({ authorization: value });
      }
    }
  });

  it("refuses two Authorization headers whatever the case of the scheme or the header name", async () => {
    const res = await request(`${base}/api/me`, [
      ["authorization", "bearer a.b.c"],
      ["Authorization", "BEARER a.b.c"],
    ]);
    expect(res.status).toBe(401);
    expect((JSON.parse(res.body) as { error: { code: string } }).error.code).toBe("malformed_token");
  });
});
