import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configScript, createStaticServer, resolveFile } from "./static-server.js";

let dir: string;
let base: string;
let server: ReturnType<typeof createStaticServer>;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "web-static-"));
  await mkdir(path.join(dir, "assets"));
  await writeFile(path.join(dir, "index.html"), "<!doctype html><title>app</title>");
  await writeFile(path.join(dir, "assets", "index-abc.js"), "console.log(1)");
  await writeFile(path.join(os.tmpdir(), "web-static-secret.txt"), "secret");
  server = createStaticServer({ root: dir, apiBaseUrl: "http://localhost:4321" });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

describe("the web app's static server", () => {
  it("serves index.html with security headers that allow calls to the service only", async () => {
    const res = await fetch(`${base}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(await res.text()).toContain("<title>app</title>");
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("connect-src 'self' http://localhost:4321 ws://localhost:4321");
    expect(csp).toContain("script-src 'self'");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("writes the run-time config into /config.js, uncached", async () => {
    const res = await fetch(`${base}/config.js`);
    expect(res.headers.get("content-type")).toContain("text/javascript");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.text()).toBe('window.__CONFIG__ = {"apiBaseUrl":"http://localhost:4321"};\n');
  });

  it("caches hashed assets for a year and falls back to index.html for app paths only", async () => {
    const asset = await fetch(`${base}/assets/index-abc.js`);
    expect(asset.headers.get("cache-control")).toContain("immutable");
    expect(asset.headers.get("content-type")).toContain("text/javascript");
    expect((await fetch(`${base}/tasks/123`)).status).toBe(200);
    const missing = await fetch(`${base}/missing.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ ok: false, error: { code: "not_found", message: "not found" } });
  });

  it("never serves a file outside its root and refuses other methods", async () => {
    for (const probe of ["/..%2fweb-static-secret.txt", "/..%2f..%2f..%2fetc%2fpasswd", "/%2e%2e/web-static-secret.txt"]) {
      const res = await fetch(`${base}${probe}`);
      expect(res.status).toBe(404);
      expect(await res.text()).not.toContain("secret");
    }
    expect((await fetch(`${base}/%E0%A4%A`)).status).toBe(400);
    expect(resolveFile(dir, "/../web-static-secret.txt")).toBe(path.join(dir, "web-static-secret.txt"));
    expect(resolveFile(dir, "/..%2f..%2fetc/passwd")).toBe(path.join(dir, "etc", "passwd"));
    expect(resolveFile(dir, "/%E0%A4%A")).toBeUndefined();
    expect(resolveFile(dir, "/a%00b")).toBeUndefined();
    const post = await fetch(`${base}/`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    expect(((await post.json()) as { error: { code: string } }).error.code).toBe("method_not_allowed");
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it("adds the seconds between session checks when the server has them", () => {
    expect(configScript("http://localhost:4321", 5)).toBe(
      'window.__CONFIG__ = {"apiBaseUrl":"http://localhost:4321","sessionRecheckSeconds":5};\n',
    );
  });

  it("escapes the config so a hostile value cannot close the script", () => {
    expect(configScript("http://x/</script><script>alert(1)</script>")).not.toContain("</script>");
  });
});
