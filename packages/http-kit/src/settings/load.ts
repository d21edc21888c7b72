import type { z } from "zod";

/**
 * Parses the environment once at start-up with the service's one schema. On failure it prints
 * one clear line per problem (naming the variable, never its value) and exits with status 78
 * (configuration error).
 */
export function loadConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env, name = "service"): z.output<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((i) => `  - ${i.path.join(".") || "(env)"}: ${i.message}`);
  process.stderr.write(`${name}: invalid configuration\n${lines.join("\n")}\n`);
  process.exit(78);
}
