import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs as parseNodeArgs } from "node:util";
import { z } from "zod";
import type { DoctorOptions } from "./doctor.js";

/** The default base URL and origin: what `pnpm start` serves. */
export const DEFAULT_BASE_URL = "http://localhost:3000";
export const DEFAULT_ORIGIN = "http://localhost:5173";

export const USAGE = `usage: pnpm doctor [--base-url URL] [--origin ORIGIN] [--email E --password P]

Runs the contract's diagnostics against a running service and prints PASS/FAIL/SKIP per check
with the fix; exits 1 when a check fails.
  --base-url   the service's base URL (default ${DEFAULT_BASE_URL})
  --origin     the web app's origin for the CORS checks (default ${DEFAULT_ORIGIN})
  --email, --password
               an existing user for the sign-in round trip (default: sign up a throwaway
               doctor+<random>@example.invalid user)
Environment: DATABASE_URL (the identity's database: jwks checks) and AUTH_SECRET (decrypt
check); without them those checks are skipped. Against a local base URL both are taken from
pnpm start's .data/ (secrets.json, embedded PostgreSQL on EMBEDDED_PG_PORT) when unset.`;

const url = (name: string) =>
  z
    .url({ error: `${name} must be an absolute http(s) URL` })
    .refine((v) => /^https?:/.test(v), `${name} must be an absolute http(s) URL`)
    .transform((v) => v.replace(/\/+$/, ""));

const schema = z
  .object({
    baseUrl: url("--base-url").default(DEFAULT_BASE_URL),
    origin: url("--origin")
      .transform((v) => new URL(v).origin)
      .default(DEFAULT_ORIGIN),
    email: z.string().min(1).optional(),
    password: z.string().min(1).optional(),
  })
  .refine((o) => (o.email === undefined) === (o.password === undefined), "--email and --password go together");

/** Parsed command line: options to run with, or help / a usage error. */
export type ParsedArgs = { kind: "run"; options: DoctorOptions; notes: string[] } | { kind: "help" } | { kind: "error"; message: string };

/** Where `pnpm start` keeps its state (embedded database, development secrets). */
function localState(root: string, env: NodeJS.ProcessEnv): { databaseUrl: string; authSecret: string | undefined } | undefined {
  const secretsFile = path.join(env.STACK_DATA_DIR ?? path.join(root, ".data"), "secrets.json");
  if (!existsSync(secretsFile)) return undefined;
  let authSecret: string | undefined;
  try {
    authSecret = (JSON.parse(readFileSync(secretsFile, "utf8")) as { authSecret?: string }).authSecret;
  } catch {
    authSecret = undefined;
  }
  const port = env.EMBEDDED_PG_PORT ?? "54329";
  return { databaseUrl: `postgresql://postgres:postgres@127.0.0.1:${port}/app`, authSecret };
}

/**
 * Parses the command line and environment. DATABASE_URL and AUTH_SECRET come only from the
 * environment (never argv, where other users could read them). Against a local base URL with
 * both unset, `pnpm start`'s embedded database and development secret (.data/) are used.
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
  const parsed = schema.safeParse({
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
  if (!databaseUrl && !authSecret && local) {
    const state = localState(root, env);
    if (state) {
      databaseUrl = state.databaseUrl;
      authSecret = state.authSecret;
      notes.push("using pnpm start's local state (.data/secrets.json and the embedded database) for the database checks");
    }
  }
  return { kind: "run", options: { ...parsed.data, databaseUrl, authSecret }, notes };
}
