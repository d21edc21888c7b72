import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** One line of a profile summary: a frame (or a package) and its share of non-idle CPU time. */
export interface ProfileLine {
  name: string;
  selfMs: number;
  pct: number;
}

export interface ProfileSummary {
  file: string;
  totalMs: number;
  frames: ProfileLine[];
  packages: ProfileLine[];
  /** Inclusive time of frames matching each watched pattern (e.g. key decryption), in % of non-idle. */
  watched: Record<string, number>;
}

/** The newest `.cpuprofile` in a directory. */
export function newestProfile(dir: string): string | undefined {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".cpuprofile"))
    .map((f) => path.join(dir, f));
  return files.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
}

/** Where a frame's code lives: a package name, a node: module, workspace code, or V8 itself. */
export function packageOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith("(") ? functionName : "(native)";
  const pnpm = /node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pnpm) return pnpm[1] as string;
  const plain = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (plain) return plain[1] as string;
  if (url.startsWith("node:")) return `node:${url.slice(5).split("/")[0]}`;
  const ws = /\/((?:apps|packages|tools|bench)\/[^/]+)\//.exec(url);
  if (ws) return ws[1] as string;
  return url;
}

function shortUrl(url: string): string {
  const pnpm = /node_modules\/\.pnpm\/[^/]+\/node_modules\/(.*)$/.exec(url);
  if (pnpm) return pnpm[1] as string;
  const ws = /\/((?:apps|packages|tools|bench)\/.*)$/.exec(url);
  if (ws) return ws[1] as string;
  return url;
}

/**
 * Self time per frame and per package from a V8 `.cpuprofile` (as written by `node --cpu-prof`),
 * as a share of non-idle time, plus the inclusive share of frames matching `watch` patterns.
 */
export function summarizeProfile(file: string, top = 15, watch: Record<string, RegExp> = {}): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const frames = new Map<string, number>();
  const packages = new Map<string, number>();
  const watchedUs = new Map<string, number>(Object.keys(watch).map((k) => [k, 0]));
  let total = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === "(idle)") continue;
    total += us;
    const name = `${functionName || "(anonymous)"}${url ? ` ${shortUrl(url)}:${lineNumber + 1}` : ""}`;
    frames.set(name, (frames.get(name) ?? 0) + us);
    const pkg = packageOf(url, functionName);
    packages.set(pkg, (packages.get(pkg) ?? 0) + us);
    // Inclusive: charge this sample's time to each watched pattern found anywhere up its stack.
    const hit = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const frame = byId.get(cur)?.callFrame;
      if (!frame) break;
      for (const [key, re] of Object.entries(watch)) if (re.test(`${frame.functionName} ${frame.url}`)) hit.add(key);
    }
    for (const key of hit) watchedUs.set(key, (watchedUs.get(key) ?? 0) + us);
  }
  const lines = (map: Map<string, number>): ProfileLine[] =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, selfMs: us / 1000, pct: total > 0 ? (us / total) * 100 : 0 }));
  const watched: Record<string, number> = {};
  for (const [key, us] of watchedUs) watched[key] = total > 0 ? (us / total) * 100 : 0;
  return { file, totalMs: total / 1000, frames: lines(frames), packages: lines(packages), watched };
}
