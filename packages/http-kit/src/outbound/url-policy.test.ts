import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { pinnedLookup, pinnedPost } from "./pinned-request.js";
import { isForbiddenAddress, isLoopbackAddress, OutboundUrlPolicy, OutboundUrlRefused } from "./url-policy.js";

describe("isForbiddenAddress", () => {
  it("refuses loopback, link-local, private, CGNAT, this-network, multicast, ULA and mapped forms", () => {
    for (const address of [
      "127.0.0.1",
      "127.255.0.9",
      "0.0.0.0",
      "0.1.2.3",
      "10.0.0.1",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "100.64.0.1",
      "100.127.255.255",
      "169.254.169.254",
      "224.0.0.1",
      "239.255.255.250",
      "255.255.255.255",
      "::",
      "::1",
      "[::1]",
      "fc00::1",
      "fd12:3456::1",
      "fe80::1",
      "ff02::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "::ffff:169.254.169.254",
      "::ffff:10.0.0.1",
      "::127.0.0.1",
      "64:ff9b::a9fe:a9fe",
      "2002:a9fe:a9fe::1",
      "not-an-ip",
    ]) {
      expect(isForbiddenAddress(address), address).toBe(true);
    }
  });

  it("allows public addresses", () => {
    for (const address of ["93.184.216.34", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8"]) {
      expect(isForbiddenAddress(address), address).toBe(false);
    }
  });
});

const publicDns = (answers: Record<string, string[]>) => async (hostname: string) => {
  const list = answers[hostname];
  if (!list) throw new Error(`ENOTFOUND ${hostname}`);
  return list.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
};

describe("OutboundUrlPolicy", () => {
  const strict = new OutboundUrlPolicy({
    allowPrivate: false,
    resolveAll: publicDns({
      "as.example": ["93.184.216.34"],
      "rebind.example": ["93.184.216.34", "127.0.0.1"],
      "meta.example": ["169.254.169.254"],
      "v6.example": ["::ffff:10.0.0.1"],
    }),
  });

  it("statically refuses http, credentials, private literals and localhost when saving settings", () => {
    expect(strict.problem("https://as.example/token")).toBeUndefined();
    expect(strict.problem("http://as.example/token")).toBe("must be an https URL");
    expect(strict.problem("https://user:pw@as.example/token")).toBe("must not contain credentials");
    for (const url of [
      "https://169.254.169.254/x",
      "https://[::1]/x",
      "https://[::ffff:127.0.0.1]/x",
      "https://0x7f.1/x",
      "https://10.1.2.3/",
    ]) {
      expect(strict.problem(url), url).toMatch(/private, loopback or link-local/);
    }
    expect(strict.problem("https://localhost:8443/x")).toBe("must not point to localhost");
    expect(strict.problem("ftp://as.example/")).toBe("must be an https URL");
  });

  it("resolves and pins a public host, and refuses a host with any forbidden address", async () => {
    await expect(strict.resolve("https://as.example/token")).resolves.toMatchObject({ address: "93.184.216.34", family: 4 });
    for (const url of ["https://rebind.example/t", "https://meta.example/t", "https://v6.example/t", "https://nowhere.example/t"]) {
      await expect(strict.resolve(url), url).rejects.toBeInstanceOf(OutboundUrlRefused);
    }
  });

  it("with the development flag allows http and private addresses", async () => {
    const dev = new OutboundUrlPolicy({ allowPrivate: true, resolveAll: publicDns({ "as.test": ["127.0.0.1"] }) });
    expect(dev.problem("http://127.0.0.1:9/token")).toBeUndefined();
    await expect(dev.resolve("http://as.test:9/token")).resolves.toMatchObject({ address: "127.0.0.1" });
    expect(dev.problem("ftp://as.test/")).toBe("must be an http(s) URL");
  });

  it("with named private origins allows exactly those (the sample MCP server of pnpm start) and nothing else private", async () => {
    const sample = new OutboundUrlPolicy({
      allowPrivate: false,
      allowPrivateOrigins: ["http://127.0.0.1:3920"],
      resolveAll: publicDns({ "as.example": ["93.184.216.34"], "sample.test": ["127.0.0.1"] }),
    });
    expect(sample.problem("http://127.0.0.1:3920/mcp")).toBeUndefined();
    expect(sample.problem("http://127.0.0.1:3920/.well-known/oauth-authorization-server")).toBeUndefined();
    await expect(sample.resolve("http://127.0.0.1:3920/token")).resolves.toMatchObject({ address: "127.0.0.1", family: 4 });
    expect(sample.problem("https://as.example/token")).toBeUndefined();
    for (const url of ["http://127.0.0.1:3921/mcp", "http://10.0.0.1:3920/mcp", "http://as.example/token"]) {
      expect(sample.problem(url), url).toBeDefined();
    }
    expect(sample.problem("https://127.0.0.1:3920/mcp")).toMatch(/private, loopback or link-local/);
    expect(sample.problem("http://localhost:3920/mcp")).toBe("must be an https URL");
    for (const url of ["https://169.254.169.254/latest", "http://sample.test:3920/mcp"]) {
      await expect(sample.resolve(url), url).rejects.toBeInstanceOf(OutboundUrlRefused);
    }
  });
});

describe("the loopback allowance (webhook endpoints outside production)", () => {
  const local = new OutboundUrlPolicy({
    allowPrivate: false,
    allowLoopback: true,
    resolveAll: publicDns({
      localhost: ["127.0.0.1", "::1"],
      "as.example": ["93.184.216.34"],
      "lan.example": ["192.168.1.20"],
      "mixed.example": ["127.0.0.1", "10.0.0.7"],
    }),
  });

  it("tells loopback from the other forbidden ranges", () => {
    for (const address of ["127.0.0.1", "127.9.9.9", "::1", "[::1]", "::ffff:127.0.0.1"])
      expect(isLoopbackAddress(address), address).toBe(true);
    for (const address of ["10.0.0.1", "169.254.169.254", "::", "0.0.0.0", "8.8.8.8", "localhost"]) {
      expect(isLoopbackAddress(address), address).toBe(false);
    }
  });

  it("allows http and this host's loopback, and still refuses every other private or link-local address", async () => {
    for (const url of [
      "http://127.0.0.1:9/hook",
      "http://[::1]:9/hook",
      "http://localhost:9/hook",
      "https://as.example/hook",
      "http://as.example/hook",
    ]) {
      expect(local.problem(url), url).toBeUndefined();
    }
    for (const url of ["http://10.0.0.1/hook", "http://169.254.169.254/latest", "http://[fe80::1]/hook", "http://0.0.0.0/hook"]) {
      expect(local.problem(url), url).toMatch(/private, loopback or link-local/);
    }
    expect(local.problem("ftp://127.0.0.1/")).toBe("must be an http(s) URL");
    await expect(local.resolve("http://localhost:9/hook")).resolves.toMatchObject({ address: "127.0.0.1" });
    for (const url of ["http://lan.example/hook", "http://mixed.example/hook"]) {
      await expect(local.resolve(url), url).rejects.toBeInstanceOf(OutboundUrlRefused);
    }
  });

  it("is off unless asked: the production policy refuses loopback and http", () => {
    expect(strictPolicy().problem("http://127.0.0.1:9/hook")).toBe("must be an https URL");
    expect(strictPolicy().problem("https://127.0.0.1:9/hook")).toMatch(/private, loopback or link-local/);
    expect(strictPolicy().problem("https://localhost/hook")).toBe("must not point to localhost");
  });
});

const strictPolicy = () => new OutboundUrlPolicy({ allowPrivate: false, resolveAll: publicDns({}) });

describe("pinnedPost", () => {
  it("connects to the checked address whatever the name resolves to, and caps the body", async () => {
    const server = http.createServer((req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(req.url === "/big" ? "x".repeat(100) : JSON.stringify({ host: req.headers.host }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    try {
      // "pinned.invalid" has no DNS answer: only the pinned lookup can make this connect.
      const url = new URL(`http://pinned.invalid:${port}/token`);
      const answer = await pinnedPost({ url, address: "127.0.0.1", family: 4 }, { headers: {}, body: "a=1" });
      expect(answer).toEqual({ status: 200, body: JSON.stringify({ host: `pinned.invalid:${port}` }) });
      const big = await pinnedPost(
        { url: new URL(`http://pinned.invalid:${port}/big`), address: "127.0.0.1", family: 4 },
        { headers: {}, body: "", maxBytes: 10 },
      );
      expect(big).toEqual({ status: 200, body: undefined });
    } finally {
      server.close();
    }
  });

  it("answers both lookup shapes with the pinned address", () => {
    const lookup = pinnedLookup("203.0.113.9", 4);
    const seen: unknown[] = [];
    lookup("anything", { all: true }, (...args: unknown[]) => seen.push(args));
    lookup("anything", {}, (...args: unknown[]) => seen.push(args));
    expect(seen).toEqual([
      [null, [{ address: "203.0.113.9", family: 4 }]],
      [null, "203.0.113.9", 4],
    ]);
  });
});
