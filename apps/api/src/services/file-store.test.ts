import { mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileStore, PARTIAL_MAX_IDLE_MS } from "./file-store.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "file-store-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ID = (n: number) => `0190a0b0-0000-7000-8000-${String(n).padStart(12, "0")}`;

describe("FileStore", () => {
  it("sweeps abandoned partial files at start and keeps complete and fresh partial ones", async () => {
    const store = new FileStore(dir);
    const now = Date.now();
    const old = new Date(now - PARTIAL_MAX_IDLE_MS - 1_000);
    await writeFile(store.pathOf(ID(1)), "complete");
    await utimes(store.pathOf(ID(1)), old, old);
    await writeFile(store.partialPathOf(ID(2)), "cut off by a shutdown");
    await utimes(store.partialPathOf(ID(2)), old, old);
    await writeFile(store.partialPathOf(ID(3)), "still arriving");
    await store.init(now);
    expect((await readdir(dir)).sort()).toEqual([ID(1), `${ID(3)}.partial`]);
  });

  it("commits a partial file under its final name, and removes either form", async () => {
    const store = new FileStore(dir);
    await store.init();
    await writeFile(store.partialPathOf(ID(4)), "bytes");
    await store.commit(ID(4));
    expect(await readdir(dir)).toEqual([ID(4)]);
    await writeFile(store.partialPathOf(ID(5)), "bytes");
    await store.remove([ID(4), ID(5)]);
    expect(await readdir(dir)).toEqual([]);
  });
});
