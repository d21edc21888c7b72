import { freePort } from "@app/db/embedded";
import { ENTRY } from "./paths.js";
import { type ServiceProcess, startProcess, stopProcess, waitHealthy } from "./processes.js";

/** Options of {@link launchStack}. */
export interface StackOptions {
  databaseUrl: string;
  /** Gateway port (the one base URL); 0 picks a free port. */
  port: number;
  authSecret: string;
  dataEncryptionKey: string;
  /** Public base URL (default `http://localhost:<port>`); JWT issuer and audience. */
  baseUrl?: string;
  /** How many identity and API processes to run behind the gateway (default 1 each). */
  identityInstances?: number;
  apiInstances?: number;
  /** Extra environment for every service (e.g. CORS_ORIGINS, UPLOAD_DIR, REDIS_URL). */
  env?: Record<string, string>;
  /** Extra environment per service name ("identity-1", "api-2", ...). */
  envFor?: (name: string) => Record<string, string>;
  onLine?: (name: string, line: string) => void;
  /**
   * Also serve the web app (apps/web) on its own origin `http://localhost:<port>` (0: a free
   * port), pointed at the base URL; that origin is added to CORS_ORIGINS of identity and API.
   */
  web?: { port: number };
}

/** A running stack. */
export interface RunningStack {
  baseUrl: string;
  identityUrls: string[];
  apiUrls: string[];
  /** The web app's origin, when it was asked for. */
  webUrl: string | undefined;
  processes: ServiceProcess[];
  /** Resolves with the first service that exits on its own. */
  firstExit: Promise<ServiceProcess>;
  stop(): Promise<void>;
}

/**
 * Starts identity, API and gateway processes on one base URL: `/api/auth/*` to identity, the
 * rest of `/api/*` to the API; optionally the web app's static server on its own origin. Used by
 * `pnpm start` and by the end-to-end tests.
 */
export async function launchStack(options: StackOptions): Promise<RunningStack> {
  const port = options.port === 0 ? await freePort() : options.port;
  const baseUrl = options.baseUrl ?? `http://localhost:${port}`;
  const webPort = options.web ? (options.web.port === 0 ? await freePort() : options.web.port) : undefined;
  const webUrl = webPort === undefined ? undefined : `http://localhost:${webPort}`;
  const { AUTH_SECRET: _a, DATA_ENCRYPTION_KEY: _d, ...inherited } = process.env;
  const shared = {
    ...inherited,
    NODE_ENV: process.env.NODE_ENV ?? "development",
    DATABASE_URL: options.databaseUrl,
    BASE_URL: baseUrl,
    ...options.env,
    ...(webUrl ? { CORS_ORIGINS: [options.env?.CORS_ORIGINS ?? inherited.CORS_ORIGINS, webUrl].filter(Boolean).join(",") } : {}),
  };
  const processes: ServiceProcess[] = [];
  const identityUrls: string[] = [];
  const apiUrls: string[] = [];
  const start = async (name: string, entry: string, env: Record<string, string>) => {
    const proc = startProcess({
      name,
      entry,
      env: { ...shared, ...env, ...options.envFor?.(name) },
      ...(options.onLine ? { onLine: options.onLine } : {}),
    });
    processes.push(proc);
    return proc;
  };
  try {
    const starting: Promise<void>[] = [];
    for (let i = 1; i <= (options.identityInstances ?? 1); i += 1) {
      const p = await freePort();
      identityUrls.push(`http://127.0.0.1:${p}`);
      const proc = await start(`identity-${i}`, ENTRY.identity, { PORT: String(p), AUTH_SECRET: options.authSecret });
      starting.push(waitHealthy(`http://127.0.0.1:${p}/healthz`, proc));
    }
    for (let i = 1; i <= (options.apiInstances ?? 1); i += 1) {
      const p = await freePort();
      apiUrls.push(`http://127.0.0.1:${p}`);
      const identityUrl = identityUrls[(i - 1) % identityUrls.length] as string;
      const proc = await start(`api-${i}`, ENTRY.api, {
        PORT: String(p),
        IDENTITY_URL: identityUrl,
        DATA_ENCRYPTION_KEY: options.dataEncryptionKey,
      });
      starting.push(waitHealthy(`http://127.0.0.1:${p}/healthz`, proc));
    }
    const gateway = await start("gateway", ENTRY.gateway, {
      PORT: String(port),
      IDENTITY_UPSTREAMS: identityUrls.join(","),
      API_UPSTREAMS: apiUrls.join(","),
    });
    starting.push(waitHealthy(`http://127.0.0.1:${port}/healthz`, gateway));
    if (webPort !== undefined) {
      const web = await start("web", ENTRY.web, { PORT: String(webPort), API_BASE_URL: baseUrl });
      starting.push(waitHealthy(`http://127.0.0.1:${webPort}/healthz`, web));
    }
    await Promise.all(starting);
  } catch (error) {
    await Promise.all(processes.map((p) => stopProcess(p, 3_000)));
    throw error;
  }
  const firstExit = Promise.race(processes.map((p) => p.exited.then(() => p)));
  return {
    baseUrl,
    identityUrls,
    apiUrls,
    webUrl,
    processes,
    firstExit,
    async stop() {
      // Gateway (and web server) first: stop taking traffic; then the services drain in-flight requests.
      const gateway = processes.filter((p) => p.name === "gateway" || p.name === "web");
      await Promise.all(gateway.map((p) => stopProcess(p)));
      await Promise.all(processes.filter((p) => !gateway.includes(p)).map((p) => stopProcess(p)));
    },
  };
}
