import { freePort } from "@app/db/embedded";
import { type DevMail, mailLines, startDevMail, wantsDevMail } from "./dev-mail.js";
import { identityIdpEnv, type LocalIdp, localIdpLine, startLocalIdp } from "./local-idp.js";
import { apiMcpEnv, type McpSample, startMcpSample } from "./mcp-sample.js";
import { ENTRY, VITE, WEB_DIR } from "./paths.js";
import { type ServiceProcess, startProcess, waitHealthy } from "./processes.js";
import { distinctPorts, type MetricsEndpoint, metricsPorts } from "./service-ports.js";
import { type RestartPolicy, type Supervised, supervise } from "./supervise.js";

/**
 * The services' stdout is a pipe to this launcher, so their own TTY check (packages/http-kit/src/
 * logger.ts) would always choose JSON: the launcher asks for readable lines when it itself writes
 * to a terminal in development. An explicit LOG_FORMAT wins.
 */
export function serviceLogFormat(env: NodeJS.ProcessEnv, isTTY: boolean): { LOG_FORMAT?: string } {
  if (env.LOG_FORMAT) return { LOG_FORMAT: env.LOG_FORMAT };
  return isTTY && env.NODE_ENV !== "production" ? { LOG_FORMAT: "pretty" } : {};
}

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
   * `dev`: Vite's dev server (hot reload, `pnpm dev`) instead of the built app's static server.
   */
  web?: { port: number; dev?: boolean };
  /** Restart a crashed service with backoff (`pnpm start`); without it any exit ends `firstExit`. */
  restart?: RestartPolicy;
  /** Called with every service process spawned, restarts included (start.ts records their pids). */
  onSpawn?: (proc: ServiceProcess) => void;
  /** Launcher messages (restarts). */
  log?: (line: string) => void;
  /**
   * Run the development mailbox (dev-mail.ts) when no SMTP_URL is set and NODE_ENV is not
   * production: identity sends to its catcher, each mail's links go to the console as `mail`
   * lines, and the gateway serves the mailbox at `{base_url}/dev/mail`.
   */
  devMail?: boolean;
  /**
   * Run the sample MCP server (mcp-sample.ts) in this process, never with NODE_ENV=production:
   * its URL goes to the console as an `mcp` line and the API may reach private addresses.
   */
  mcpSample?: boolean;
  /**
   * Run the local OpenID Provider (local-idp.ts) in this process on 127.0.0.1 (`port`, 0: a free
   * one), never with NODE_ENV=production: identity gets it as the provider `local`.
   */
  localIdp?: { port: number };
  /**
   * Give every identity and API process a free METRICS_PORT of its own, so each serves `/metrics`
   * (`pnpm start`; listed in {@link RunningStack.metrics}). Without it no service gets one: a
   * METRICS_PORT in this process's environment is never handed to several services.
   */
  metrics?: boolean;
}

/** How `start` spawns a service other than `node <entry>` alone. */
interface SpawnExtra {
  args?: string[];
  cwd?: string;
  anyAnswer?: boolean;
}

/** A running stack. */
export interface RunningStack {
  baseUrl: string;
  identityUrls: string[];
  apiUrls: string[];
  /** The web app's origin, when it was asked for. */
  webUrl: string | undefined;
  /** The development mailbox, when it runs (`devMail` without SMTP_URL). */
  devMail: DevMail | undefined;
  /** The sample MCP server, when it runs (`mcpSample`). */
  mcpSample: McpSample | undefined;
  /** The local OpenID Provider, when it runs (`localIdp`). */
  localIdp: LocalIdp | undefined;
  /** The metrics listeners of identity and the API (`metrics`), in start order; empty otherwise. */
  metrics: MetricsEndpoint[];
  /** The processes running now (a restarted service's entry is replaced). */
  processes: ServiceProcess[];
  /** Resolves with the first service that exits on its own (with `restart`: that gave up). */
  firstExit: Promise<ServiceProcess>;
  /** Why `firstExit` resolved ("exited unexpectedly (code 1)", "crashed 5 times …"). */
  exitReason: Promise<string>;
  /** Restarts the named services with fresh processes (`pnpm dev` after a rebuild). */
  restart(names: (name: string) => boolean): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts identity, API and gateway processes on one base URL: `/api/auth/*` to identity, the
 * rest of `/api/*` to the API; optionally the web app's static server on its own origin. Used by
 * `pnpm start` and by the end-to-end tests.
 */
export async function launchStack(options: StackOptions): Promise<RunningStack> {
  const nextPort = distinctPorts(freePort, [options.port, options.web?.port ?? 0]);
  const port = options.port === 0 ? await nextPort() : options.port;
  const baseUrl = options.baseUrl ?? `http://localhost:${port}`;
  const webPort = options.web ? (options.web.port === 0 ? await nextPort() : options.web.port) : undefined;
  const webUrl = webPort === undefined ? undefined : `http://localhost:${webPort}`;
  const { AUTH_SECRET: _a, DATA_ENCRYPTION_KEY: _d, METRICS_PORT: _m, ...inherited } = process.env;
  const shared = {
    ...inherited,
    ...serviceLogFormat(process.env, process.stdout.isTTY === true),
    NODE_ENV: process.env.NODE_ENV ?? "development",
    DATABASE_URL: options.databaseUrl,
    BASE_URL: baseUrl,
    ...options.env,
    ...(webUrl ? { CORS_ORIGINS: [options.env?.CORS_ORIGINS ?? inherited.CORS_ORIGINS, webUrl].filter(Boolean).join(",") } : {}),
  };
  const emitLine = options.onLine ?? ((name: string, line: string) => process.stdout.write(`${name.padEnd(8)} | ${line}\n`));
  const devMail =
    options.devMail && wantsDevMail(shared)
      ? await startDevMail((mail) => {
          for (const line of mailLines(mail)) emitLine("mail", line);
        })
      : undefined;
  const identityMail: Record<string, string> = devMail
    ? { SMTP_URL: devMail.smtpUrl, MAIL_FROM: options.env?.MAIL_FROM ?? inherited.MAIL_FROM ?? "Accounts <no-reply@localhost>" }
    : {};
  const gatewayMail: Record<string, string> = devMail ? { DEV_MAIL_URL: devMail.httpUrl } : {};
  const mcpSample = options.mcpSample && shared.NODE_ENV !== "production" ? await startMcpSample() : undefined;
  if (mcpSample) emitLine("mcp", `sample MCP server: ${mcpSample.url}`);
  const apiMcp = apiMcpEnv(shared, webUrl, mcpSample?.url);
  const localIdp =
    options.localIdp && shared.NODE_ENV !== "production" ? await startLocalIdp({ baseUrl, port: options.localIdp.port }) : undefined;
  if (localIdp) emitLine("idp", localIdpLine(localIdp));
  const identityIdp: Record<string, string> = localIdp ? identityIdpEnv(shared, localIdp) : {};
  const services: Supervised[] = [];
  const processes: ServiceProcess[] = [];
  const identityUrls: string[] = [];
  const apiUrls: string[] = [];
  const metrics = metricsPorts(options.metrics === true, nextPort, options.env?.METRICS_HOST ?? inherited.METRICS_HOST);
  const start = (name: string, entry: string, env: Record<string, string>, healthUrl: string, extra: SpawnExtra = {}): Promise<void> => {
    const index = processes.length;
    // Vite has no /healthz echoing STACK_INSTANCE_ID: any answer of the dev server will do.
    const healthy = (proc: ServiceProcess) => waitHealthy(healthUrl, extra.anyAnswer ? { ...proc, instance: undefined } : proc);
    const service = supervise(name, {
      spawn: () =>
        startProcess({
          name,
          entry,
          env: { ...shared, ...env, ...options.envFor?.(name) },
          ...(extra.args ? { args: extra.args } : {}),
          ...(extra.cwd ? { cwd: extra.cwd } : {}),
          ...(options.onLine ? { onLine: options.onLine } : {}),
        }),
      healthy,
      policy: options.restart,
      onSpawn: (proc) => {
        processes[index] = proc;
        options.onSpawn?.(proc);
      },
      ...(options.log ? { log: options.log } : {}),
    });
    services.push(service);
    const ready = healthy(service.current);
    ready.catch(() => undefined); // awaited below with the others; never an unhandled rejection
    return ready;
  };
  // Edge last: identity and the APIs drain first (SSE `shutdown` events, WebSocket 1001, in-flight
  // requests) while the gateway still carries them to clients; then the gateway and web server.
  const isEdge = (s: Supervised) => s.name === "gateway" || s.name === "web";
  const stop = async () => {
    await Promise.all(services.filter((s) => !isEdge(s)).map((s) => s.stop(6_000)));
    await Promise.all(services.filter(isEdge).map((s) => s.stop(2_000)));
    await devMail?.close();
    await mcpSample?.close();
    await localIdp?.close();
  };
  try {
    const starting: Promise<void>[] = [];
    for (let i = 1; i <= (options.identityInstances ?? 1); i += 1) {
      const p = await nextPort();
      identityUrls.push(`http://127.0.0.1:${p}`);
      starting.push(
        start(
          `identity-${i}`,
          ENTRY.identity,
          { PORT: String(p), AUTH_SECRET: options.authSecret, ...identityMail, ...identityIdp, ...(await metrics.envFor(`identity-${i}`)) },
          `http://127.0.0.1:${p}/healthz`,
        ),
      );
    }
    // The APIs fetch identity's signing keys as soon as they start (and pause after a failure):
    // identity serves first.
    await Promise.all(starting);
    for (let i = 1; i <= (options.apiInstances ?? 1); i += 1) {
      const p = await nextPort();
      apiUrls.push(`http://127.0.0.1:${p}`);
      const identityUrl = identityUrls[(i - 1) % identityUrls.length] as string;
      starting.push(
        start(
          `api-${i}`,
          ENTRY.api,
          {
            PORT: String(p),
            IDENTITY_URL: identityUrl,
            DATA_ENCRYPTION_KEY: options.dataEncryptionKey,
            ...apiMcp,
            ...(await metrics.envFor(`api-${i}`)),
          },
          `http://127.0.0.1:${p}/healthz`,
        ),
      );
    }
    starting.push(
      start(
        "gateway",
        ENTRY.gateway,
        { PORT: String(port), IDENTITY_UPSTREAMS: identityUrls.join(","), API_UPSTREAMS: apiUrls.join(","), ...gatewayMail },
        `http://127.0.0.1:${port}/healthz`,
      ),
    );
    if (webPort !== undefined) {
      starting.push(
        options.web?.dev
          ? start("web", VITE, { VITE_API_BASE_URL: baseUrl }, `http://127.0.0.1:${webPort}/`, {
              args: ["--port", String(webPort), "--strictPort", "--host", "127.0.0.1", "--clearScreen", "false"],
              cwd: WEB_DIR,
              anyAnswer: true,
            })
          : start("web", ENTRY.web, { PORT: String(webPort), API_BASE_URL: baseUrl }, `http://127.0.0.1:${webPort}/healthz`),
      );
    }
    await Promise.all(starting);
  } catch (error) {
    await Promise.all(services.map((s) => s.stop(3_000)));
    await devMail?.close();
    await mcpSample?.close();
    await localIdp?.close();
    throw error;
  }
  const gaveUp = Promise.race(services.map((s) => s.gaveUp));
  return {
    baseUrl,
    identityUrls,
    apiUrls,
    webUrl,
    devMail,
    mcpSample,
    localIdp,
    metrics: metrics.endpoints,
    processes,
    firstExit: gaveUp.then((g) => g.proc),
    exitReason: gaveUp.then((g) => g.reason),
    restart: async (names) => {
      await Promise.all(services.filter((s) => names(s.name)).map((s) => s.restart()));
    },
    stop,
  };
}
