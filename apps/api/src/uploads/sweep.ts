import type { PrismaClient } from "@app/db";
import type { Logger } from "pino";
import type { FileStore, SweepResult } from "./file-store.js";

/**
 * The upload directory's sweep (file-store.ts), run at start and on every purge interval:
 * `upload` rows tell which complete files still belong to someone. Runs do not overlap (a call
 * while one runs waits for it); a failure (database or disk) is logged and the next run retries.
 * Resolves with what was deleted, or undefined when the run failed.
 */
export function uploadSweep(store: FileStore, prisma: PrismaClient, logger: Logger): (reason: string) => Promise<SweepResult | undefined> {
  const rowsOf = async (ids: string[]) => {
    const rows = await prisma.upload.findMany({ where: { id: { in: ids } }, select: { id: true } });
    return new Set(rows.map((r) => r.id));
  };
  let running: Promise<SweepResult | undefined> | undefined;
  return (reason) => {
    running ??= store
      .sweep(rowsOf)
      .then(
        (result) => {
          if (result.partials || result.orphans) logger.info({ reason, ...result }, "upload directory swept");
          return result;
        },
        (error: Error) => {
          logger.warn({ reason, err: error.message }, "upload sweep failed; the next run retries");
          return undefined;
        },
      )
      .finally(() => {
        running = undefined;
      });
    return running;
  };
}
