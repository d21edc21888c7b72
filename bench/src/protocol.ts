/** Messages between the benchmark orchestrator and its load-generator process (over Node IPC). */

/** One HTTP load measurement (autocannon), optionally preceded by a warm-up run. */
export interface HttpSpec {
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /**
   * Round-robin one header over a named pool, shared by all connections. The position is kept per
   * `cursor` (one per server) across runs, so each server sees one strict rotation over the whole
   * pool: with a pool larger than its LRU verify cache, every request misses.
   */
  rotate?: { pool: string; header: string; prefix: string; cursor: string };
  connections: number;
  durationSec: number;
  warmupSec: number;
  /** A fixed number of requests instead of a duration (warm-up skipped). */
  amount?: number;
  /** Processes whose CPU time is charged to the server (read from /proc around the measured run). */
  serverPids: number[];
  /** A process tree whose CPU time is reported separately (the PostgreSQL postmaster and its backends). */
  extraTreePid?: number;
}

/** What one measured run produced. */
export interface HttpResult {
  requests: number;
  durationSec: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** CPU milliseconds used by `serverPids` during the measured run. */
  serverCpuMs: number;
  extraCpuMs: number;
  /** The load generator's own CPU use during the measured run, in % of one core. */
  loaderCpuPct: number;
}

/** One WebSocket or SSE subscriber: the token it authenticates with and the task it follows. */
export interface Subscriber {
  token: string;
  taskId: string;
}

export interface StreamsSpec {
  /** API base URL (http://host:port) the subscribers connect to. */
  baseUrl: string;
  subscribers: Subscriber[];
  ws: number;
  sse: number;
  /** How many connections are opened at once. */
  batch: number;
}

export interface StreamsOpened {
  kind: "ws" | "sse";
  opened: number;
  failed: number;
  firstError?: string;
  elapsedMs: number;
}

export interface PublishSpec {
  /** API base URL of the publishing instance. */
  baseUrl: string;
  /** One entry per task: the owner's token and the task; each round posts one message to each. */
  targets: Subscriber[];
  rounds: number;
  intervalMs: number;
  /** How long to wait for stragglers after the last round. */
  settleMs: number;
}

export interface LatencySummary {
  received: number;
  expected: number;
  /** From just before the POST on the other instance to receipt (end to end). */
  p50: number;
  p99: number;
  max: number;
  /** From the POST's answer (the commit, hence the NOTIFY, already happened) to receipt: the fan-out alone. */
  afterCommitP50: number;
  afterCommitP99: number;
}

export interface PublishResult {
  posts: number;
  postNon2xx: number;
  /** Wall time of the POST itself (write, commit, NOTIFY) on the publishing instance. */
  postMs: { p50: number; p99: number };
  ws: LatencySummary;
  sse: LatencySummary;
}

export type Command =
  | { id: number; cmd: "pool"; name: string; values: string[] }
  | { id: number; cmd: "http"; spec: HttpSpec }
  | { id: number; cmd: "http-pair"; a: HttpSpec; b: HttpSpec }
  | { id: number; cmd: "open-streams"; spec: StreamsSpec; kind: "ws" | "sse" }
  | { id: number; cmd: "publish"; spec: PublishSpec }
  | { id: number; cmd: "close-streams" };

export type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };

/** A command without its id (the channel numbers them). */
export type CommandBody = Command extends infer C ? (C extends Command ? Omit<C, "id"> : never) : never;
