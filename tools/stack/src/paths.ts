import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

function findRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (dir !== path.dirname(dir)) {
    if (existsSync(path.join(dir, "pnpm-workspace.yaml"))) return dir;
    dir = path.dirname(dir);
  }
  throw new Error("cannot find the repository root (pnpm-workspace.yaml)");
}

/** The repository root. */
export const ROOT = findRoot();

/** Entry points of the service processes (built by `pnpm build`). */
export const ENTRY = {
  identity: path.join(ROOT, "apps/identity/dist/server.js"),
  api: path.join(ROOT, "apps/api/dist/server.js"),
  gateway: path.join(ROOT, "apps/gateway/dist/server.js"),
  web: path.join(ROOT, "apps/web/dist/server/serve.js"),
} as const;

/** Preloaded into each service: it stops itself when its parent dies (see watch-parent.ts). */
export const WATCH_PARENT = path.join(ROOT, "tools/stack/dist/watch-parent.js");

/** The web app's folder and its Vite command line (`pnpm dev`). */
export const WEB_DIR = path.join(ROOT, "apps/web");
export const VITE = path.join(WEB_DIR, "node_modules/vite/bin/vite.js");
