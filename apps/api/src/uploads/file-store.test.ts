import { mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileStore, ORPHAN_GRACE_MS, PARTIAL_MAX_IDLE_MS } from "./file-store.js";
import { LEASE_DIR, LEASE_STALE_MS } from "./instance-lease.js";

let dir: string;
const stores: FileStore[] = [];
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "file-store-"));
});
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  await rm(dir, { recursive: true, force: true });
});

const ID = (n: number) => `0190a0b0-0000-7000-8000-${String(n).padStart(12, "0")}`;
/** Every upload id has a row. */
const allRows = async (ids: string[]) => new Set(ids);
const noRows = async () => new Set<string>();

async function started(instanceId?: string): Promise<FileStore> {
  const store = new FileStore(dir, instanceId ? { instanceId } : {});
  await store.init();
  stores.push(store);
  return store;
}

const files = async () => (await readdir(dir)).filter((n) => n !== LEASE_DIR).sort();

async function age(file: string, ms: number): Promise<void> {
  const then = new Date(Date.now() - ms);
  await utimes(file, then, then);
}

describe("FileStore", () => {
  it("commits a partial file under its final name, and removes either form", async () => {
    const store = await started();
    await writeFile(store.begin(ID(4)), "bytes");
    await store.commit(ID(4));
    expect(await files()).toEqual([ID(4)]);
    await writeFile(store.begin(ID(5)), "bytes");
    await store.remove([ID(4), ID(5)]);
    expect(await files()).toEqual([]);
  });

  it("sweeps its own partial files that no request writes, and keeps the ones being written", async () => {
    const store = await started();
    await writeFile(store.begin(ID(1)), "still arriving");
    await writeFile(store.partialPathOf(ID(2)), "cut off a moment ago");
    expect(await store.sweep(allRows)).toEqual({ partials: 1, orphans: 0 });
    expect(await files()).toEqual([`${ID(1)}.${store.instanceId}.partial`]);
  });

  it("sweeps a fresh partial file of an instance that is gone, at once, and keeps one of an instance that runs", async () => {
    const running = await started("aaaaaaaaaaaaaaaa");
    await writeFile(running.begin(ID(1)), "a live upload on the other instance");
    // An instance stopped (or crashed) a second ago: its lease is gone, or names a dead process.
    const stopped = await started("bbbbbbbbbbbbbbbb");
    await writeFile(stopped.begin(ID(2)), "cut off by the stop");
    await stopped.close();
    await writeFile(stopped.partialPathOf(ID(2)), "cut off by the stop");
    await writeFile(path.join(dir, LEASE_DIR, "cccccccccccccccc.json"), JSON.stringify({ host: os.hostname(), pid: 2 ** 22 + 7 }));
    await writeFile(path.join(dir, `${ID(3)}.cccccccccccccccc.partial`), "its writer's process is gone");

    const next = await started();
    expect(await next.sweep(allRows)).toEqual({ partials: 2, orphans: 0 });
    expect(await files()).toEqual([`${ID(1)}.aaaaaaaaaaaaaaaa.partial`]);
    expect((await readdir(path.join(dir, LEASE_DIR))).sort()).toEqual(["aaaaaaaaaaaaaaaa.json", `${next.instanceId}.json`].sort());
  });

  it("treats an instance whose lease was not renewed for a while as gone (another host)", async () => {
    const store = await started();
    await writeFile(path.join(dir, LEASE_DIR, "dddddddddddddddd.json"), JSON.stringify({ host: "elsewhere", pid: 1 }));
    await writeFile(path.join(dir, `${ID(1)}.dddddddddddddddd.partial`), "x");
    expect(await store.sweep(allRows)).toEqual({ partials: 0, orphans: 0 });
    await age(path.join(dir, LEASE_DIR, "dddddddddddddddd.json"), LEASE_STALE_MS + 1_000);
    expect(await store.sweep(allRows)).toEqual({ partials: 1, orphans: 0 });
  });

  it("sweeps a partial file that names no instance once it is idle for a minute", async () => {
    const store = await started();
    await writeFile(path.join(dir, `${ID(1)}.partial`), "old");
    await age(path.join(dir, `${ID(1)}.partial`), PARTIAL_MAX_IDLE_MS + 1_000);
    await writeFile(path.join(dir, `${ID(2)}.partial`), "recent");
    expect(await store.sweep(allRows)).toEqual({ partials: 1, orphans: 0 });
    expect(await files()).toEqual([`${ID(2)}.partial`]);
  });

  it("sweeps complete files whose row is gone once past the grace, and keeps those with a row", async () => {
    const store = await started();
    for (const n of [1, 2, 3]) await writeFile(store.pathOf(ID(n)), "complete");
    await age(store.pathOf(ID(1)), ORPHAN_GRACE_MS + 1_000);
    await age(store.pathOf(ID(2)), ORPHAN_GRACE_MS + 1_000);
    const rowsOf = async (ids: string[]) => new Set(ids.filter((id) => id === ID(2)));
    expect(await store.sweep(rowsOf)).toEqual({ partials: 0, orphans: 1 });
    expect(await files()).toEqual([ID(2), ID(3)]);
    expect(await store.sweep(noRows, Date.now() + ORPHAN_GRACE_MS + 1_000)).toEqual({ partials: 0, orphans: 2 });
  });

  it("deletes its own partial files and its lease when it closes after the last request", async () => {
    const store = await started();
    await writeFile(store.begin(ID(1)), "cut off by the stop");
    await store.close();
    stores.splice(stores.indexOf(store), 1);
    expect(await readdir(dir)).toEqual([]);
  });
});
