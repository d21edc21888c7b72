import type { z } from "zod";

/** One variable of one service, as docs/configuration.md lists it (tools/stack/src/config-doc.ts). */
export interface VariableDoc {
  name: string;
  service: string;
  /** Markdown: the default, `unset`, or `required`. */
  default: string;
  /** Markdown: what the variable does. */
  description: string;
}

/** What a settings field may carry besides zod's `description` (set with `.meta()`). */
interface SettingsMeta {
  description?: string;
  /** The default in words, when parsing an unset variable cannot tell it (derived, or set by `pnpm start`). */
  docDefault?: string;
}

function defaultText(field: z.ZodType): string {
  const parsed = field.safeParse(undefined);
  if (!parsed.success) return "required";
  const value = parsed.data;
  if (value === undefined || (Array.isArray(value) && value.length === 0)) return "unset";
  return typeof value === "string" ? `\`${value}\`` : String(value);
}

/**
 * The documentation rows of a service's config schema: every field must carry a description, so
 * a variable cannot be added without saying what it does (the schema is refused here, and the
 * test of docs/configuration.md fails). `extra` lists variables the schema reads by pattern
 * (OIDC_<ID>_*), which have no field of their own.
 */
export function describeSettings(
  service: string,
  schema: z.ZodObject,
  extra: ReadonlyArray<Omit<VariableDoc, "service">> = [],
): VariableDoc[] {
  const rows = Object.entries(schema.shape).map(([name, field]): VariableDoc => {
    const meta = ((field as z.ZodType).meta() ?? {}) as SettingsMeta;
    if (!meta.description) throw new Error(`${service}: ${name} has no description`);
    return { name, service, default: meta.docDefault ?? defaultText(field as z.ZodType), description: meta.description };
  });
  return [...rows, ...extra.map((row) => ({ ...row, service }))];
}
