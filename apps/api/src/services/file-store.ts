import { createReadStream, type ReadStream } from "node:fs";
import { mkdir, rm, stat } from "node:fs/promises";
import path from "node:path";

/**
 * Upload bytes on local disk: one file per upload, named by its server-generated id (never by a
 * client-supplied name), under the configured directory.
 */
export class FileStore {
  constructor(readonly dir: string) {}

  /** Creates the directory if needed. */
  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
  }

  /** Where the bytes of upload `id` live. */
  pathOf(id: string): string {
    if (!/^[0-9a-f-]{36}$/.test(id)) throw new Error("invalid upload id");
    return path.join(this.dir, id);
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

  /** Deletes the bytes of uploads (missing files are fine). */
  async remove(ids: readonly string[]): Promise<void> {
    await Promise.all(ids.map((id) => rm(this.pathOf(id), { force: true })));
  }
}
