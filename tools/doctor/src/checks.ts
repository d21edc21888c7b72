/** Outcome of one diagnostic. */
/** `warn`: works, but something a production deployment should change (does not fail the run). */
export type CheckStatus = "pass" | "fail" | "skip" | "warn";

/** One line of the report. */
export interface CheckResult {
  /** Stable id, e.g. `cors-exposes-jwt`. */
  id: string;
  /** The contract's diagnostic list this belongs to. */
  group: string;
  /** What was checked. */
  title: string;
  status: CheckStatus;
  /** What was observed (failures and skips). */
  detail?: string;
  /** What to do about a failure. */
  fix?: string;
}

/** The contract's three diagnostic lists, in its order. */
export const GROUPS = {
  login: "every business call answers 401 after login",
  restart: "after a restart",
  mcp: "401 on the MCP authorize route",
} as const;

/** Builders for results. */
export const result = {
  pass: (id: string, group: string, title: string, detail?: string): CheckResult => ({
    id,
    group,
    title,
    status: "pass",
    ...(detail ? { detail } : {}),
  }),
  fail: (id: string, group: string, title: string, detail: string, fix: string): CheckResult => ({
    id,
    group,
    title,
    status: "fail",
    detail,
    fix,
  }),
  skip: (id: string, group: string, title: string, detail: string): CheckResult => ({ id, group, title, status: "skip", detail }),
  warn: (id: string, group: string, title: string, detail: string, fix: string): CheckResult => ({
    id,
    group,
    title,
    status: "warn",
    detail,
    fix,
  }),
};

/** Formats one result: `PASS|FAIL|SKIP|WARN  <check>  — <fix / reason>`. */
export function formatResult(r: CheckResult): string {
  const head = `${r.status.toUpperCase()}  ${r.title}`;
  if (r.status === "pass") return r.detail ? `${head}  (${r.detail})` : head;
  if (r.status === "skip") return `${head}  — skipped: ${r.detail ?? ""}`;
  return `${head}  — ${r.fix ?? "see above"} [${r.detail ?? ""}]`;
}

/** Formats the whole report with one heading per diagnostic list and a closing count. */
export function formatReport(results: CheckResult[]): string {
  const lines: string[] = [];
  let group = "";
  for (const r of results) {
    if (r.group !== group) {
      group = r.group;
      lines.push(`# ${group}`);
    }
    lines.push(formatResult(r));
  }
  const count = (s: CheckStatus) => results.filter((r) => r.status === s).length;
  const warnings = count("warn") ? `, ${count("warn")} warning(s)` : "";
  lines.push(`${results.length} checks: ${count("pass")} passed, ${count("fail")} failed, ${count("skip")} skipped${warnings}`);
  return `${lines.join("\n")}\n`;
}
