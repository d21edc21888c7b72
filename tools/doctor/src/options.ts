import { parseArgs as parseNodeArgs } from "node:util";
import { z } from "zod";
import type { DoctorOptions } from "./doctor.js";
import { localDataDir, readLocalStack } from "./local-stack.js";

/** The default base URL and origin: what `pnpm start` serves. */
export const DEFAULT_BASE_URL = "http://localhost:3000";
export const DEFAULT_ORIGIN = "http://localhost:5173";

export const USAGE = `usage: pnpm diagnose [--base-url URL] [--origin ORIGIN] [--email E --password P] [--data-dir DIR]

Runs the contract's diagnostics against a running service and prints PASS/FAIL/SKIP per check
with the fix; exits 1 when a check fails.
  --base-url   the service's base URL (default ${DEFAULT_BASE_URL}, or the port in PORT)
  --origin     the web app's origin for the CORS checks (default ${DEFAULT_ORIGIN}, or WEB_PORT)
  --email, --password
               an existing user for the sign-in round trip (default: sign up a throwaway
               doctor+<random>@example.invalid user, deleted afterwards when the database is
               reachable)
  --data-dir   pnpm start's local state (default STACK_DATA_DIR, else .data/ in the repository)
Environment: DATABASE_URL (the identity's database: jwks checks, role check, clean-up) and
AUTH_SECRET (decrypt check); without them those checks are skipped. Against a local base URL
both are taken from pnpm start's data directory (secrets.json, embedded PostgreSQL on
EMBEDDED_PG_PORT) when unset.`;

const url = (name: string) =>
  z
    .url({ error: `${name} must be an absolute http(s) URL` })
    .refine((v) => /^https?:/.test(v), `${name} must be an absolute http(s) URL`)
    .transform((v) => v.replace(/\/+$/, ""));

/** The command line's schema; the defaults follow `pnpm start`'s PORT and WEB_PORT. */
function schemaFor(env: NodeJS.ProcessEnv) {
  const baseUrl = env.PORT ? `http://localhost:${env.PORT}` : DEFAULT_BASE_URL;
  const origin = env.WEB_PORT && env.WEB_PORT !== "off" ? `http://localhost:${env.WEB_PORT}` : DEFAULT_ORIGIN;
  return z
    .object({
      baseUrl: url("--base-url").default(baseUrl),
      origin: url("--origin")
        .transform((v) => new URL(v).origin)
        .default(origin),
      email: z.string().min(1).optional(),
      password: z.string().min(1).optional(),
    })
    .refine((o) => (o.email === undefined) === (o.password === undefined), "--email and --password go together");
}

/** Parsed command line: options to run with, or help / a usage error. */
export type ParsedArgs = { kind: "run"; options: DoctorOptions; notes: string[] } | { kind: "help" } | { kind: "error"; message: string };

/**
 * Parses the command line and environment. DATABASE_URL and AUTH_SECRET come only from the
 * environment (never argv, where other users could read them). Against a local base URL with
 * both unset, `pnpm start`'s embedded database and development secret are read from its data
 * directory: `--data-dir`, else STACK_DATA_DIR, else `<root>/.data` (tests pass a directory of
 * their own, so what a developer's `pnpm start` left behind never changes their outcome).
 */
export function parseArgs(argv: string[], env: NodeJS.ProcessEnv, root: string): ParsedArgs {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseNodeArgs({
      args: argv.filter((a) => a !== "--"),
      options: {
        "base-url": { type: "string" },
        origin: { type: "string" },
        email: { type: "string" },
        password: { type: "string" },
        "data-dir": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    return { kind: "error", message: (error as Error).message };
  }
  if (values.help) return { kind: "help" };
  const str = (v: string | boolean | undefined) => (typeof v === "string" ? v : undefined);
  const parsed = schemaFor(env).safeParse({
    baseUrl: str(values["base-url"]),
    origin: str(values.origin),
    email: str(values.email),
    password: str(values.password),
  });
  if (!parsed.success) return { kind: "error", message: parsed.error.issues.map((i) => i.message).join("; ") };
  const notes: string[] = [];
  let databaseUrl = env.DATABASE_URL || undefined;
  let authSecret = env.AUTH_SECRET || undefined;
  const local = ["localhost", "127.0.0.1", "[::1]"].includes(new URL(parsed.data.baseUrl).hostname);
  let databaseSource: DoctorOptions["databaseSource"] = databaseUrl ? "environment" : undefined;
  if (!databaseUrl && !authSecret && local) {
    const dataDir = str(values["data-dir"]) ?? localDataDir(root, env);
    const state = readLocalStack(dataDir, env);
    if (state) {
      databaseUrl = state.databaseUrl;
      authSecret = state.authSecret;
      databaseSource = "local-stack";
      notes.push(`using pnpm start's local state (${dataDir}: secrets.json and the embedded database) for the database checks`);
    }
  }
  return { kind: "run", options: { ...parsed.data, databaseUrl, authSecret, ...(databaseSource ? { databaseSource } : {}) }, notes };
}
