/** Command-line settings of `pnpm bench`. */
export const SCENARIOS = ["micro", "memory", "pairs", "peers", "auth", "identity", "jwks", "streaming", "profile"] as const;
export type Scenario = (typeof SCENARIOS)[number];

export interface Settings {
  quick: boolean;
  only: Set<Scenario>;
  rounds: number;
  durationSec: number;
  warmupSec: number;
  connections: number;
  /** Rounds of the simultaneous pairs (each pair once per round, servers swapping sides). */
  pairRounds: number;
  /** Seconds of each simultaneous pair run. */
  pairDurationSec: number;
  /** Rounds of the adjacent pairs (A B B A per pair per round). */
  adjacentRounds: number;
  /** Only these pairs of the pairs scenario (`--pairs a,b`); every pair when undefined. */
  pairKeys: ReadonlySet<string> | undefined;
  /** Seconds of each adjacent run. */
  adjacentSec: number;
  /** Distinct valid tokens for the cold path: above the verify cache bound, so LRU round-robin always misses. */
  coldTokens: number;
  /** Distinct tokens held in the cache for the memory scenario (the cache bound). */
  cachedTokens: number;
  users: number;
  floodSec: number;
  wsConnections: number;
  sseStreams: number;
  eventRounds: number;
  signIns: number;
  profileSec: number;
  logLevel: string;
  write: boolean;
  pin: boolean;
  /** Where the run is written (`--out`); default artifacts/bench/runs/<start time>.md. */
  outPath: string | undefined;
}

const USAGE = `pnpm bench [--quick] [--only a,b] [--rounds N] [--duration S] [--connections N] [--pair-rounds N] [--adjacent-rounds N] [--pairs key,key] [--log-level L] [--no-write] [--no-pin] [--out FILE]
scenarios: ${SCENARIOS.join(", ")} (default: all; "profile" only in a full run or when named)`;

export function parseSettings(argv: readonly string[]): Settings {
  const quick = argv.includes("--quick");
  const value = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    if (i < 0) return undefined;
    const v = argv[i + 1];
    if (v === undefined || v.startsWith("--")) throw new Error(`${name} needs a value\n${USAGE}`);
    return v;
  };
  const num = (name: string, fallback: number): number => {
    const v = value(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number\n${USAGE}`);
    return n;
  };
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const onlyText = value("--only");
  let only: Set<Scenario>;
  if (onlyText) {
    const names = onlyText.split(",").map((s) => s.trim());
    for (const n of names) if (!(SCENARIOS as readonly string[]).includes(n)) throw new Error(`unknown scenario ${n}\n${USAGE}`);
    only = new Set(names as Scenario[]);
  } else {
    only = new Set(SCENARIOS.filter((s) => s !== "profile" || !quick));
  }
  return {
    quick,
    only,
    rounds: num("--rounds", quick ? 3 : 5),
    durationSec: num("--duration", quick ? 2 : 5),
    warmupSec: quick ? 0.5 : 1,
    connections: num("--connections", 16),
    pairRounds: num("--pair-rounds", quick ? 4 : 8),
    pairDurationSec: quick ? 2 : 3,
    adjacentRounds: num("--adjacent-rounds", quick ? 3 : 6),
    pairKeys: value("--pairs") === undefined ? undefined : new Set((value("--pairs") as string).split(",").map((k) => k.trim())),
    adjacentSec: quick ? 1 : 1.5,
    coldTokens: 12_000,
    cachedTokens: 10_000,
    users: quick ? 10 : 20,
    floodSec: quick ? 12 : 60,
    wsConnections: num("--ws", quick ? 1_000 : 5_000),
    sseStreams: num("--sse", quick ? 200 : 1_000),
    eventRounds: quick ? 5 : 10,
    signIns: quick ? 5 : 20,
    profileSec: quick ? 5 : 10,
    logLevel: value("--log-level") ?? "info",
    write: !argv.includes("--no-write"),
    pin: !argv.includes("--no-pin"),
    outPath: value("--out"),
  };
}
