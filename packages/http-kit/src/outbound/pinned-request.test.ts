import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pinnedFetch, ResponseTooLarge } from "./pinned-request.js";
import { OutboundUrlPolicy, OutboundUrlRefused } from "./url-policy.js";

let server: http.Server;
let port: number;
const seen: Array<{ host: string | undefined; method: string | undefined; body: string }> = [];
beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += String(c);
    });
    req.on("end", () => {
      seen.push({ host: req.headers.host, method: req.method, body });
      if (req.url === "/redirect") return void res.writeHead(302, { location: "http://169.254.169.254/" }).end();
      if (req.url === "/big") return void res.end("x".repeat(10_000));
      if (req.url === "/empty") return void res.writeHead(204).end();
      res.setHeader("content-type", "application/json");
      res.setHeader("set-cookie", ["a=1", "b=2"]);
      res.end(JSON.stringify({ ok: true }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** A development policy whose resolver sends every `.test` name to this host. */
const devPolicy = new OutboundUrlPolicy({
  allowPrivate: true,
  resolveAll: async (host) => (host.endsWith(".test") ? [{ address: "127.0.0.1", family: 4 }] : []),
});

describe("pinnedFetch", () => {
  it("connects to the address the policy checked, sends the body and answers a Response", async () => {
    const fetchFn = pinnedFetch({ resolve: (url) => devPolicy.resolve(url) });
    const res = await fetchFn(`http://tools.test:${port}/json`, { method: "POST", body: new URLSearchParams({ a: "1" }) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    expect(res.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(seen.at(-1)).toEqual({ host: `tools.test:${port}`, method: "POST", body: "a=1" });
  });

  it("answers a redirect instead of following it, and a 204 with no body", async () => {
    const fetchFn = pinnedFetch({ resolve: (url) => devPolicy.resolve(url) });
    const res = await fetchFn(`http://tools.test:${port}/redirect`);
    expect([res.status, res.headers.get("location")]).toEqual([302, "http://169.254.169.254/"]);
    expect((await fetchFn(`http://tools.test:${port}/empty`)).status).toBe(204);
  });

  it("errors the body stream past the cap and reports it", async () => {
    let reported = 0;
    const fetchFn = pinnedFetch({
      resolve: (url) => devPolicy.resolve(url),
      maxBytes: 1_000,
      onTooLarge: () => {
        reported += 1;
      },
    });
    const res = await fetchFn(`http://tools.test:${port}/big`);
    await expect(res.text()).rejects.toBeInstanceOf(ResponseTooLarge);
    expect(reported).toBe(1);
  });

  it("never connects where the production policy refuses", async () => {
    const strict = new OutboundUrlPolicy({ allowPrivate: false, resolveAll: async () => [{ address: "127.0.0.1", family: 4 }] });
    const fetchFn = pinnedFetch({ resolve: (url) => strict.resolve(url) });
    const before = seen.length;
    await expect(fetchFn(`https://tools.example:${port}/json`)).rejects.toBeInstanceOf(OutboundUrlRefused);
    await expect(fetchFn(`http://tools.example:${port}/json`)).rejects.toBeInstanceOf(OutboundUrlRefused);
    expect(seen.length).toBe(before);
  });
});
