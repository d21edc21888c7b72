import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { freePort } from "@app/db/embedded";
import { serviceUrlsOf } from "@app/db/testing";
import { ENTRY, type ServiceProcess, startProcess, stopProcess, waitHealthy } from "@app/stack";

/** One service process that can be stopped, restarted (same port) and inspected. */
export class Service {
  readonly name: string;
  readonly entry: string;
  #port: number;
  /** Environment of the next start (change it before `restart` to restart differently). */
  env: Record<string, string>;
  #proc: ServiceProcess | undefined;
  #started = false;
  readonly #onLine: (name: string, line: string) => void;

  constructor(options: {
    name: string;
    entry: string;
    port: number;
    env: Record<string, string>;
    onLine: (name: string, line: string) => void;
  }) {
    this.name = options.name;
    this.entry = options.entry;
    this.#port = options.port;
    this.env = options.env;
    this.#onLine = options.onLine;
  }

  /** The port; fixed after the first successful start (restarts reuse it). */
  get port(): number {
    return this.#port;
  }

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The running process (throws when stopped). */
  get process(): ServiceProcess {
    if (!this.#proc) throw new Error(`${this.name} is not running`);
    return this.#proc;
  }

  /** True while the process has not exited. */
  get running(): boolean {
    const child = this.#proc?.child;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  /**
   * Starts the process and waits until it logged that it listens and `/healthz` answers. Ports
   * come from `freePort()`, so another process may take one first: a first start that exits before
   * listening retries on a new port (a restart keeps its port).
   */
  async start(): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      let listening: () => void = () => undefined;
      const heard = new Promise<void>((resolve) => {
        listening = resolve;
      });
      const proc = startProcess({
        name: this.name,
        entry: this.entry,
        env: { ...this.env, PORT: String(this.#port) },
        onLine: (name, line) => {
          if (line.includes('"msg":"listening"')) listening();
          this.#onLine(name, line);
        },
      });
      this.#proc = proc;
      const outcome = await Promise.race([
        heard.then(() => "listening" as const),
        proc.exited.then(() => "exited" as const),
        new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 30_000).unref()),
      ]);
      if (outcome === "listening") {
        await waitHealthy(`${this.url}/healthz`, proc, 30_000);
        this.#started = true;
        return;
      }
      if (outcome === "timeout") {
        await stopProcess(proc, 1_000);
        throw new Error(`${this.name} did not start listening within 30 s`);
      }
      if (this.#started || attempt >= 3) throw new Error(`${this.name} exited before listening (port ${this.#port})`);
      this.#port = await freePort();
    }
  }

  /** SIGTERM (SIGKILL after `graceMs`); resolves with the exit code. */
  async stop(graceMs = 15_000): Promise<number | null> {
    const proc = this.#proc;
    if (!proc) return null;
    await stopProcess(proc, graceMs);
    return proc.exited;
  }

  /** Stops, applies `env` changes, starts again on the same port. */
  async restart(env: Record<string, string> = {}): Promise<void> {
    await this.stop();
    this.env = { ...this.env, ...env };
    await this.start();
  }

  /** Resident set size of the process in bytes (from /proc/<pid>/status). */
  rssBytes(): number {
    return rssOf(this.process.child.pid ?? -1);
  }
}

/** Resident set size of a process in bytes, read from /proc/<pid>/status (Linux). */
export function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
  if (!kb) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kb) * 1024;
}

/** Options of {@link startCluster}. */
export interface ClusterOptions {
  /**
   * The database. For one made by `createTestDatabase`, identity and API connect as their own
   * roles (docs/database-roles.md); any other URL is given to both services.
   */
  databaseUrl: string;
  authSecret: string;
  dataEncryptionKey: string;
  identities?: number;
  apis?: number;
  /** Environment of every service (the parent's environment is not inherited, apart from PATH). Keep LOG_LEVEL at info or below: start-up waits for the "listening" line. */
  env?: Record<string, string>;
  /** Extra environment per service ("identity-1", "api-2"...). */
  envFor?: (name: string) => Record<string, string>;
  /** Every output line of every service. */
  onLine?: (name: string, line: string) => void;
}

/** Identity and API processes on one database, each on its own port, no gateway (tests talk to each directly). */
export interface Cluster {
  /** The public base URL the services were told (JWT issuer and audience). */
  baseUrl: string;
  identities: Service[];
  apis: Service[];
  /** Every output line so far, prefixed with the service name. */
  lines: string[];
  /** The API processes' shared UPLOAD_DIR (removed by `stop`). */
  uploadDir: string;
  stop(): Promise<void>;
}

/**
 * Starts `identities` identity processes and `apis` API processes (API i asks identity
 * ((i - 1) mod identities) for the key set), all at once, and waits until each is healthy.
 */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const lines: string[] = [];
  const onLine = (name: string, line: string) => {
    lines.push(`${name} ${line}`);
    options.onLine?.(name, line);
  };
  const baseUrl = `http://localhost:${await freePort()}`;
  const shared: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    NODE_ENV: "test",
    LOG_LEVEL: "info",
    DATABASE_URL: options.databaseUrl,
    BASE_URL: baseUrl,
    ...options.env,
  };
  const roles = serviceUrlsOf(options.databaseUrl);
  const uploadDir = await mkdtemp(path.join(os.tmpdir(), "resilience-uploads-"));
  const identities: Service[] = [];
  const apis: Service[] = [];
  const stop = async () => {
    await Promise.all(apis.map((s) => s.stop()));
    await Promise.all(identities.map((s) => s.stop()));
    await rm(uploadDir, { recursive: true, force: true });
  };
  try {
    for (let i = 1; i <= (options.identities ?? 1); i += 1) {
      const name = `identity-${i}`;
      const database: Record<string, string> = roles ? { DATABASE_URL: roles.identity } : {};
      const env = { ...shared, ...database, AUTH_SECRET: options.authSecret, ...options.envFor?.(name) };
      identities.push(new Service({ name, entry: ENTRY.identity, port: await freePort(), env, onLine }));
    }
    // All identities at once (they race on an empty key set), then the APIs that point at them.
    await Promise.all(identities.map((s) => s.start()));
    for (let i = 1; i <= (options.apis ?? 1); i += 1) {
      const name = `api-${i}`;
      const identity = identities[(i - 1) % identities.length];
      if (!identity) throw new Error("an API needs an identity service");
      const env = {
        ...shared,
        ...(roles ? { DATABASE_URL: roles.api } : {}),
        IDENTITY_URL: identity.url,
        DATA_ENCRYPTION_KEY: options.dataEncryptionKey,
        UPLOAD_DIR: uploadDir,
        ...options.envFor?.(name),
      };
      apis.push(new Service({ name, entry: ENTRY.api, port: await freePort(), env, onLine }));
    }
    await Promise.all(apis.map((s) => s.start()));
  } catch (error) {
    await stop();
    throw error;
  }
  return { baseUrl, identities, apis, lines, uploadDir, stop };
}
