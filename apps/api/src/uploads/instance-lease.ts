import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, rmdir, stat, utimes, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

/** Subdirectory of the upload directory holding one lease file per running API instance. */
export const LEASE_DIR = ".instances";
/** How often a running instance renews its lease (touches the file). */
export const LEASE_RENEW_MS = 5_000;
/** A lease not renewed for this long belongs to an instance that is gone (on any host). */
export const LEASE_STALE_MS = 30_000;

/** What a lease file holds: where its instance runs. */
interface LeaseBody {
  host: string;
  pid: number;
}

/** An instance id as it appears in file names: 16 lowercase hex digits. */
export const INSTANCE_ID = /^[0-9a-f]{16}$/;

/** Leases held by this process (several API apps may run in one process, as in tests). */
const held = new Set<string>();

/**
 * The mark an API instance leaves in the upload directory while it runs, so that instances
 * sharing the directory can tell a partial file still being written (its instance is alive) from
 * one whose writer is gone, whatever the file's age. The lease is `.instances/<id>.json` holding
 * the host name and pid, renewed every {@link LEASE_RENEW_MS} and deleted by an orderly stop. An
 * instance is gone when its lease is missing, not renewed for {@link LEASE_STALE_MS}, or names this
 * host and a process that no longer runs, or this very process without holding it any more (a
 * restart right after a crash need not wait, even in a container where the pid is always 1).
 */
export class InstanceLease {
  readonly id: string;
  readonly #file: string;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    readonly uploadDir: string,
    id: string = randomBytes(8).toString("hex"),
  ) {
    if (!INSTANCE_ID.test(id)) throw new Error("invalid instance id");
    this.id = id;
    this.#file = this.#fileOf(id);
  }

  /** Writes the lease (atomically: a reader never sees half of it) and starts renewing it. */
  async acquire(): Promise<void> {
    await mkdir(path.join(this.uploadDir, LEASE_DIR), { recursive: true });
    const body: LeaseBody = { host: os.hostname(), pid: process.pid };
    const temporary = `${this.#file}.tmp`;
    await writeFile(temporary, JSON.stringify(body));
    await rename(temporary, this.#file);
    held.add(this.id);
    clearInterval(this.#timer);
    this.#timer = setInterval(() => {
      const now = new Date();
      // A lease removed by someone who judged this instance gone is written again.
      utimes(this.#file, now, now).catch(() => this.acquire().catch(() => undefined));
    }, LEASE_RENEW_MS);
    this.#timer.unref();
  }

  /** Stops renewing and deletes the lease, and the lease directory when it was the last (orderly stop). */
  async release(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    held.delete(this.id);
    await rm(this.#file, { force: true });
    // Fails while another instance holds a lease (ENOTEMPTY): then the directory stays.
    await rmdir(path.join(this.uploadDir, LEASE_DIR)).catch(() => undefined);
  }

  /** True while instance `id` may still be writing into the directory. */
  async alive(id: string, now: number = Date.now()): Promise<boolean> {
    if (held.has(id)) return true;
    let body: LeaseBody;
    try {
      const info = await stat(this.#fileOf(id));
      if (now - info.mtimeMs > LEASE_STALE_MS) return false;
      body = JSON.parse(await readFile(this.#fileOf(id), "utf8")) as LeaseBody;
    } catch {
      return false;
    }
    if (body.host !== os.hostname()) return true;
    if (body.pid === process.pid) return false; // this process, and not a lease it holds
    try {
      process.kill(body.pid, 0);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code !== "ESRCH";
    }
  }

  /** Deletes the leases of instances that are gone; returns their ids. */
  async removeGone(now: number = Date.now()): Promise<string[]> {
    const names = await readdir(path.join(this.uploadDir, LEASE_DIR)).catch(() => [] as string[]);
    const gone: string[] = [];
    for (const name of names) {
      const id = name.endsWith(".json") ? name.slice(0, -5) : "";
      if (!INSTANCE_ID.test(id) || (await this.alive(id, now))) continue;
      await rm(this.#fileOf(id), { force: true });
      gone.push(id);
    }
    return gone;
  }

  #fileOf(id: string): string {
    return path.join(this.uploadDir, LEASE_DIR, `${id}.json`);
  }
}
