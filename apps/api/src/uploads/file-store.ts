import { createReadStream, type ReadStream } from "node:fs";
import { mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { InstanceLease } from "./instance-lease.js";

/** Suffix of a file still being received: renamed to its final name only once complete. */
export const PARTIAL_SUFFIX = ".partial";
/** A partial file that names no instance (`<id>.partial`) untouched this long belongs to no live upload. */
export const PARTIAL_MAX_IDLE_MS = 60_000;
/**
 * A complete file without an `upload` row is swept once it is this old. The row is written right
 * after the file gets its final name, by whichever instance received it; the grace covers that
 * moment on an instance whose in-flight work this one cannot see.
 */
export const ORPHAN_GRACE_MS = 10 * 60_000;

const UPLOAD_ID = /^[0-9a-f-]{36}$/;
/** `<id>.<instance>.partial`, or `<id>.partial` from a store that named no instance. */
const PARTIAL_NAME = /^([0-9a-f-]{36})(?:\.([0-9a-f]{16}))?\.partial$/;
/** Ids per row lookup of a sweep. */
const SWEEP_BATCH = 500;

/** Which of these upload ids have a row (the sweep's view of the `upload` table). */
export type RowsOf = (ids: string[]) => Promise<Set<string>>;

/** What a sweep deleted. */
export interface SweepResult {
  /** Partial files no live upload writes. */
  partials: number;
  /** Complete files whose row is gone. */
  orphans: number;
}

/**
 * Upload bytes on local disk: one file per upload, named by its server-generated id (never by a
 * client-supplied name), under the configured directory, which several instances may share.
 * Bytes arrive in `<id>.<instance>.partial` and are renamed to `<id>` when complete. Each instance
 * holds a lease in the directory ({@link InstanceLease}), so a sweep ({@link sweep}) deletes
 * exactly the partial files nobody writes any more: this instance's own that no request is
 * receiving, and those of instances that are gone, whatever their age; and complete files whose
 * row is gone.
 */
export class FileStore {
  readonly #lease: InstanceLease;
  /** Ids whose partial file a request of this process is writing. */
  readonly #writing = new Set<string>();

  constructor(
    readonly dir: string,
    options: { instanceId?: string } = {},
  ) {
    this.#lease = new InstanceLease(dir, options.instanceId);
  }

  /** This process's instance id (in the names of its partial files). */
  get instanceId(): string {
    return this.#lease.id;
  }

  /** Creates the directory if needed and takes this instance's lease. */
  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await this.#lease.acquire();
  }

  /**
   * After the last request ended (orderly stop): deletes this instance's partial files, which no
   * request can finish any more, and its lease.
   */
  async close(): Promise<void> {
    this.#writing.clear();
    const own = `.${this.instanceId}${PARTIAL_SUFFIX}`;
    const names = await readdir(this.dir).catch(() => [] as string[]);
    await Promise.all(names.filter((n) => n.endsWith(own)).map((n) => rm(path.join(this.dir, n), { force: true })));
    await this.#lease.release();
  }

  /** Where the bytes of upload `id` live. */
  pathOf(id: string): string {
    if (!UPLOAD_ID.test(id)) throw new Error("invalid upload id");
    return path.join(this.dir, id);
  }

  /** Where this instance writes the bytes of upload `id` while it is received. */
  partialPathOf(id: string): string {
    return `${this.pathOf(id)}.${this.instanceId}${PARTIAL_SUFFIX}`;
  }

  /** Marks upload `id` as being received by this process and returns where to write it. */
  begin(id: string): string {
    const file = this.partialPathOf(id);
    this.#writing.add(id);
    return file;
  }

  /** Gives a completely received file its final name. */
  async commit(id: string): Promise<void> {
    try {
      await rename(this.partialPathOf(id), this.pathOf(id));
    } finally {
      this.#writing.delete(id);
    }
  }

  /**
   * Deletes what nobody needs any more (at start and periodically): partial files that no request
   * of this process is writing and whose instance is not this one or is gone (whatever their age;
   * a partial naming no instance once idle for {@link PARTIAL_MAX_IDLE_MS}), then complete files
   * older than {@link ORPHAN_GRACE_MS} that `rowsOf` finds no row for, then the leases of gone
   * instances.
   */
  async sweep(rowsOf: RowsOf, now: number = Date.now()): Promise<SweepResult> {
    const result: SweepResult = { partials: 0, orphans: 0 };
    const alive = new Map<string, Promise<boolean>>();
    const isAlive = (instance: string) => {
      let known = alive.get(instance);
      if (!known) {
        known = this.#lease.alive(instance, now);
        alive.set(instance, known);
      }
      return known;
    };
    const candidates: string[] = [];
    for (const name of await readdir(this.dir)) {
      const partial = PARTIAL_NAME.exec(name);
      if (partial) {
        const [, id = "", instance] = partial;
        if (await this.#abandoned(name, id, instance, now, isAlive)) {
          await rm(path.join(this.dir, name), { force: true });
          result.partials += 1;
        }
        continue;
      }
      if (!UPLOAD_ID.test(name)) continue;
      const info = await stat(path.join(this.dir, name)).catch(() => undefined);
      if (info?.isFile() && now - info.mtimeMs >= ORPHAN_GRACE_MS) candidates.push(name);
    }
    for (let at = 0; at < candidates.length; at += SWEEP_BATCH) {
      const batch = candidates.slice(at, at + SWEEP_BATCH);
      const rows = await rowsOf(batch);
      const orphans = batch.filter((id) => !rows.has(id));
      await Promise.all(orphans.map((id) => rm(this.pathOf(id), { force: true })));
      result.orphans += orphans.length;
    }
    await this.#lease.removeGone(now);
    return result;
  }

  async #abandoned(
    name: string,
    id: string,
    instance: string | undefined,
    now: number,
    isAlive: (instance: string) => Promise<boolean>,
  ): Promise<boolean> {
    if (instance === this.instanceId) return !this.#writing.has(id);
    if (instance !== undefined) return !(await isAlive(instance));
    const info = await stat(path.join(this.dir, name)).catch(() => undefined);
    return info !== undefined && now - info.mtimeMs >= PARTIAL_MAX_IDLE_MS;
  }

  /** A read stream over upload `id` and its size, or undefined when the file is gone. */
  async open(id: string): Promise<{ stream: ReadStream; size: number } | undefined> {
    try {
      const file = this.pathOf(id);
      const info = await stat(file);
      return { stream: createReadStream(file), size: info.size };
    } catch {
      return undefined;
    }
  }

  /** Deletes the bytes of uploads, complete or partial (missing files are fine). */
  async remove(ids: readonly string[]): Promise<void> {
    await Promise.all(
      ids.flatMap((id) => {
        this.#writing.delete(id);
        const file = this.pathOf(id);
        return [rm(file, { force: true }), rm(this.partialPathOf(id), { force: true }), rm(`${file}${PARTIAL_SUFFIX}`, { force: true })];
      }),
    );
  }
}
