import { createReadStream, type ReadStream } from "node:fs";
import { mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";

/** Suffix of a file still being received: renamed to its final name only once complete. */
export const PARTIAL_SUFFIX = ".partial";
/** A partial file untouched this long belongs to no live upload (a crash or a cut shutdown). */
export const PARTIAL_MAX_IDLE_MS = 60_000;

/**
 * Upload bytes on local disk: one file per upload, named by its server-generated id (never by a
 * client-supplied name), under the configured directory. Bytes arrive in `<id>.partial` and are
 * renamed to `<id>` when complete, so a file cut off by a crash or a shutdown is recognisable and
 * swept at the next start ({@link sweepPartials}) instead of staying on disk for ever.
 */
export class FileStore {
  constructor(readonly dir: string) {}

  /** Creates the directory if needed and sweeps abandoned partial files. */
  async init(now: number = Date.now()): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await this.sweepPartials(now);
  }

  /** Where the bytes of upload `id` live. */
  pathOf(id: string): string {
    if (!/^[0-9a-f-]{36}$/.test(id)) throw new Error("invalid upload id");
    return path.join(this.dir, id);
  }

  /** Where the bytes of upload `id` are written while it is received. */
  partialPathOf(id: string): string {
    return `${this.pathOf(id)}${PARTIAL_SUFFIX}`;
  }

  /** Gives a completely received file its final name. */
  async commit(id: string): Promise<void> {
    await rename(this.partialPathOf(id), this.pathOf(id));
  }

  /**
   * Deletes `*.partial` files not written to for {@link PARTIAL_MAX_IDLE_MS}: an upload in progress
   * keeps touching its file, so another instance sharing the directory keeps its live uploads.
   * Returns how many were deleted.
   */
  async sweepPartials(now: number = Date.now()): Promise<number> {
    let swept = 0;
    for (const name of await readdir(this.dir)) {
      if (!name.endsWith(PARTIAL_SUFFIX)) continue;
      const file = path.join(this.dir, name);
      const info = await stat(file).catch(() => undefined);
      if (!info || now - info.mtimeMs < PARTIAL_MAX_IDLE_MS) continue;
      await rm(file, { force: true });
      swept += 1;
    }
    return swept;
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
    await Promise.all(ids.flatMap((id) => [rm(this.pathOf(id), { force: true }), rm(this.partialPathOf(id), { force: true })]));
  }
}
