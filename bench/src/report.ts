import type { PeerResult } from "./peers/defs.js";
import { peerTargets, renderPeers } from "./peers/report.js";
import type { Row } from "./scenarios/context.js";
import type { IdentityResult } from "./scenarios/identity.js";
import type { JwksResult } from "./scenarios/jwks.js";
import type { MemoryResult } from "./scenarios/memory.js";
import type { MicroResult } from "./scenarios/micro.js";
import { COLD_BOUND_RATIO, type PairResult } from "./scenarios/pairs.js";
import type { ProfileResult } from "./scenarios/profile.js";
import type { StreamingResult } from "./scenarios/streaming.js";
import { SCENARIOS, type Settings } from "./settings.js";
import { fmt } from "./stats.js";

/** Everything a run produced, for the printed tables and the dated file under artifacts/bench/runs/. */
export interface RunReport {
  startedAt: Date;
  finishedAt: Date;
  settings: Settings;
  machine: { cpus: number; model: string; node: string; loadBefore: number[]; loadAfter: number[]; pinned: string; commit: string };
  micro?: MicroResult;
  memory?: MemoryResult;
  pairs?: PairResult[];
  /** The peers scenario: adjacent pairs, A the peer, B ours. */
  peers?: PeerResult[];
  auth?: Row[];
  identity?: { row: Row; result: IdentityResult };
  jwks?: JwksResult;
  streaming?: StreamingResult;
  profile?: ProfileResult;
  validNon2xx: { count: number; where: string[] };
  failures: string[];
}

type Verdict = "PASS" | "MISS" | "n/a";
interface Target {
  name: string;
  verdict: Verdict;
  detail: string;
}

function row(cells: string[]): string {
  return `| ${cells.join(" | ")} |`;
}

function table(header: string[], rows: string[][], align?: string[]): string {
  return [row(header), row(align ?? header.map(() => "---")), ...rows.map(row)].join("\n");
}

function byKey(rows: Row[] | undefined, key: string): Row | undefined {
  return rows?.find((r) => r.key === key);
}

/** Evaluates the issue's targets against a run. */
export function targets(report: RunReport): Target[] {
  const out: Target[] = [];
  const a = report.auth;
  const plain = byKey(a, "plain");
  const hot = byKey(a, "jose-hot");
  const cold = byKey(a, "jose-cold");
  const cookie = [byKey(a, "cookie"), byKey(a, "cookie-pg")].filter((r): r is Row => r !== undefined);
  const bestCookie = cookie.length ? Math.max(...cookie.map((r) => r.ratio)) : Number.NaN;
  const verdict = (ok: boolean | undefined): Verdict => (ok === undefined ? "n/a" : ok ? "PASS" : "MISS");
  // Adjacent pairs (dedicated core) decide; simultaneous pairs are the cross-check.
  const pairOf = (key: string, mode: PairResult["mode"]) => report.pairs?.find((p) => p.key === key && p.mode === mode);
  const pair = (key: string) => pairOf(key, "adjacent");
  const pairText = (p: PairResult | undefined) => {
    if (!p) return "";
    const sim = pairOf(p.key, "simultaneous");
    return (
      `adjacent pairs: ${fmt(p.ratio, 3)} (rounds ${fmt(p.ratioMin, 3)}–${fmt(p.ratioMax, 3)}, A/A control ${fmt(pair("control")?.ratio, 3)})` +
      (sim ? `; simultaneous pairs: ${fmt(sim.ratio, 3)} (A/A ${fmt(pairOf("control", "simultaneous")?.ratio, 3)})` : "")
    );
  };
  const sequential = (r: Row | undefined, api: string) =>
    r
      ? `sequential rounds: reference ${fmt(r.ratio, 3)}, CPU-derived ${fmt(r.cpuRatio, 3)}; API /api/me ${fmt(byKey(a, api)?.ratio, 3)}`
      : "";
  const joined = (...parts: string[]) => parts.filter((p) => p !== "").join("; ") || "pairs and auth scenarios not run";
  // Adjacent pairs decide where they ran: the reference pair (the verifier in a bare Express app)
  // and the API pair (the issue's own definition on the product) must both pass. Else the
  // sequential rounds decide.
  const decide = (pairs: ReadonlyArray<PairResult | undefined>, fallback: boolean | undefined) => {
    const ran = pairs.filter((p): p is PairResult & { threshold: number } => p?.threshold !== undefined);
    return verdict(ran.length ? ran.every((p) => p.ratio >= p.threshold) : fallback);
  };
  const labelled = (label: string, p: PairResult | undefined) => (p ? `${label}: ${pairText(p)}` : "");
  const hotPair = pair("hot");
  const coldPair = pair("cold");
  const apiHotPair = pair("api-auth-hot");
  const apiColdPair = pair("api-auth-cold");
  const apiOverhead = pair("api-overhead");
  const overheadText = apiOverhead ? `the API's own cost, API without authentication vs /plain: ${fmt(apiOverhead.ratio, 3)}` : "";
  out.push({
    name: "Authenticated / unauthenticated req/s, repeated token >= 0.90",
    verdict: decide([hotPair, apiHotPair], hot ? hot.ratio >= 0.9 : undefined),
    detail: joined(
      labelled("reference /jose vs /plain", hotPair),
      labelled("API /api/me vs the same API without authentication", apiHotPair),
      sequential(hot, "api-hot"),
    ),
  });
  out.push({
    name: "Authenticated / unauthenticated req/s, cold tokens >= 0.45",
    verdict: decide([coldPair, apiColdPair], cold ? cold.ratio >= 0.45 : undefined),
    detail: joined(
      labelled("reference /jose vs /plain", coldPair),
      `ceiling set by the signature alone on this machine (/plain-verify vs /plain) ${fmt(pair("verify-ceiling")?.ratio, 3)}`,
      labelled("API /api/me vs the same API without authentication", apiColdPair),
      overheadText,
      sequential(cold, "api-cold"),
    ),
  });
  const hotRatio = hotPair?.ratio ?? hot?.ratio;
  const coldRatio = coldPair?.ratio ?? cold?.ratio;
  const cookiePair = pair("cookie-pg");
  const cookieBest = cookiePair ? cookiePair.ratio : bestCookie;
  out.push({
    name: "Both better than the cookie + PostgreSQL reference",
    verdict: verdict(
      hotRatio !== undefined && coldRatio !== undefined && Number.isFinite(cookieBest)
        ? hotRatio > cookieBest && coldRatio > cookieBest
        : undefined,
    ),
    detail:
      hotRatio !== undefined && coldRatio !== undefined && Number.isFinite(cookieBest)
        ? cookiePair
          ? `adjacent pairs: repeated ${fmt(hotRatio, 3)}, cold ${fmt(coldRatio, 3)} vs cookie + one raw SQL query ${fmt(cookieBest, 3)} (PostgreSQL on the same core; sequential rounds: best cookie ${fmt(bestCookie, 3)})`
          : `repeated ${fmt(hotRatio, 3)}, cold ${fmt(coldRatio, 3)} vs best cookie ${fmt(bestCookie, 3)} (sequential rounds)`
        : "pairs or auth scenario not run",
  });
  const micro = report.micro;
  const boundPair = pair("cold-bound");
  const boundName = "Cold-path CPU per request <= 1.3 x (Express baseline + raw Ed25519 verify)";
  const seqBound = plain && cold && micro ? 1.3 * (plain.cpuUs + micro.opensslSync) : undefined;
  const seqText =
    plain && cold && micro && seqBound !== undefined
      ? `sequential rounds: reference ${fmt(cold.cpuUs)} µs vs 1.3 x (${fmt(plain.cpuUs)} + ${fmt(micro.opensslSync)}) = ${fmt(seqBound)} µs (API /api/me cold: ${fmt(byKey(a, "api-cold")?.cpuUs)} µs)`
      : "";
  if (boundPair || seqText) {
    out.push({
      name: boundName,
      verdict: decide([boundPair], seqBound !== undefined && cold ? cold.cpuUs <= seqBound : undefined),
      detail: joined(
        boundPair
          ? `adjacent pair /jose cold vs /plain-verify: ${fmt(boundPair.ratio, 3)} >= 1/1.3 = ${fmt(COLD_BOUND_RATIO, 3)}, i.e. cold CPU = ${fmt(1 / boundPair.ratio, 2)} x (baseline + verify) (rounds ${fmt(boundPair.ratioMin, 3)}–${fmt(boundPair.ratioMax, 3)}; simultaneous ${fmt(pairOf("cold-bound", "simultaneous")?.ratio, 3)})`
          : "",
        seqText,
      ),
    });
  } else {
    out.push({ name: boundName, verdict: "n/a", detail: "needs pairs, or auth and micro" });
  }
  const id = report.identity?.result;
  out.push({
    name: "get-session: at most one DB round trip for the key set and one for the session",
    verdict: verdict(id ? id.dbRoundTripsPerGetSession <= 2.01 : undefined),
    detail: id
      ? `${fmt(id.dbRoundTripsPerGetSession, 2)} round trips (${fmt(id.statementsPerGetSession, 2)} statements) per get-session`
      : "identity scenario not run",
  });
  const decrypt = report.profile?.identityGetSession?.watched["key decryption (SecretBox.open / createPrivateKey)"];
  out.push({
    name: "get-session: decrypted keys reused across requests",
    verdict: verdict(decrypt === undefined ? undefined : decrypt < 0.5),
    detail:
      decrypt === undefined
        ? "needs the profile scenario"
        : `SecretBox.open/createPrivateKey: ${fmt(decrypt, 2)}% of identity CPU under get-session load (0 = opened once, reused)`,
  });
  const j = report.jwks;
  out.push({
    name: "At most one JWKS fetch per cooldown (30 s) under the unknown-kid flood",
    verdict: verdict(j ? j.fetches <= j.allowed && (j.fetches <= 1 || j.minSpacingSec >= 29.5) : undefined),
    detail: j
      ? `${j.fetches} fetches in ${j.floodSec} s (allowed ${j.allowed}), min spacing ${fmt(j.minSpacingSec, 1)} s`
      : "jwks scenario not run",
  });
  out.push(...peerTargets(report.peers));
  out.push({
    name: "Zero non-2xx on valid tokens during any run",
    verdict: report.validNon2xx.count === 0 ? "PASS" : "MISS",
    detail: report.validNon2xx.count === 0 ? "0" : `${report.validNon2xx.count}: ${report.validNon2xx.where.join("; ")}`,
  });
  return out;
}

function rowCells(r: Row): string[] {
  return [
    r.label,
    fmt(r.rps),
    `${fmt(r.rpsMin)}–${fmt(r.rpsMax)}`,
    fmt(r.ratio, 3),
    fmt(r.cpuRatio, 3),
    fmt(r.p50, 1),
    fmt(r.p99, 1),
    fmt(r.cpuUs),
    r.pgCpuUs > 0.5 ? fmt(r.pgCpuUs) : "–",
    fmt(r.non2xx),
    fmt(r.loaderPct),
    r.note ?? "",
  ];
}

const ROW_HEADER = [
  "variant",
  "req/s (median)",
  "req/s range",
  "ratio vs /plain",
  "CPU-derived ratio",
  "p50 ms",
  "p99 ms",
  "server CPU µs/req",
  "PG CPU µs/req",
  "non-2xx",
  "loader CPU %",
  "notes",
];

/** The dated Markdown section (also printed to stdout). */
export function renderReport(report: RunReport): string {
  const s = report.settings;
  const m = report.machine;
  const out: string[] = [];
  const scope = s.only.size < SCENARIOS.length - (s.quick ? 1 : 0) ? `, only ${[...s.only].join(", ")}` : "";
  out.push(`## ${report.startedAt.toISOString().slice(0, 16).replace("T", " ")} UTC — ${s.quick ? "quick" : "full"} run${scope}`);
  out.push("");
  out.push(
    `Machine: ${m.cpus} × ${m.model}, Node ${m.node}, commit ${m.commit}. Pinning: ${m.pinned}. ` +
      `Load average before/after: ${m.loadBefore.map((x) => x.toFixed(2)).join(" ")} / ${m.loadAfter.map((x) => x.toFixed(2)).join(" ")}. ` +
      `${s.rounds} interleaved rounds × ${s.durationSec} s (warm-up ${s.warmupSec} s), ${s.connections} connections, LOG_LEVEL=${s.logLevel}. ` +
      `Duration ${((report.finishedAt.getTime() - report.startedAt.getTime()) / 1000).toFixed(0)} s.`,
  );
  if (m.loadBefore[0] !== undefined && m.loadBefore[0] > 0.5) {
    out.push("");
    out.push(
      `> The machine was not quiet (load ${m.loadBefore[0].toFixed(2)} at start): absolute numbers are provisional; ratios are paired per round.`,
    );
  }
  if (report.failures.length) {
    out.push("");
    for (const f of report.failures) out.push(`> **Scenario failed:** ${f}`);
  }
  if (report.micro) {
    const u = report.micro;
    out.push("");
    out.push("### Ed25519 verification, CPU per call (server core)");
    out.push("");
    out.push(
      table(
        [
          "node:crypto verify (OpenSSL, sync)",
          "WebCrypto subtle.verify (async)",
          "jose jwtVerify (key imported)",
          "@app/auth-verify verifyToken (cache off)",
        ],
        [
          [
            `${fmt(u.opensslSync, 1)} µs`,
            `${fmt(u.webcryptoAsync, 1)} µs`,
            `${fmt(u.joseJwtVerify, 1)} µs`,
            `${fmt(u.productVerify, 1)} µs`,
          ],
        ],
      ),
    );
  }
  if (report.pairs) {
    out.push("");
    out.push("### 1. Targets as pairs (adjacent decides, simultaneous cross-checks)");
    out.push("");
    out.push(
      `**Adjacent**: one server on the dedicated server core, A B B A runs of ${s.adjacentSec} s with ${s.connections} connections, ${s.adjacentRounds} rounds; b/a = (B1 + B2) ÷ (A1 + A2) req/s. ` +
        `**Simultaneous**: two identical reference servers (and the bench's API instance) share the server core, A and B loaded at the same time for ${s.pairDurationSec} s with ${Math.max(1, Math.floor(s.connections / 2))} connections each, ${s.pairRounds} rounds, the servers swapping sides every round. The A/A control shows each method's error. ` +
        "**API pairs** (adjacent only): one API process (bench/src/api-without-auth.ts, built as server.ts builds the API) serves GET /api/me to a bearer, verified as the API does, and to a request without a credential, answered as the same user without verification.",
    );
    out.push("");
    out.push(
      table(
        [
          "method",
          "pair",
          "A",
          "B",
          "b/a (median)",
          "b/a per round (min–max)",
          "target",
          "A req/s",
          "B req/s",
          "A CPU µs/req",
          "B CPU µs/req",
          "non-2xx",
        ],
        report.pairs.map((p) => [
          p.mode,
          p.label,
          p.aLabel,
          p.bLabel,
          `**${fmt(p.ratio, 3)}**`,
          `${fmt(p.ratioMin, 3)}–${fmt(p.ratioMax, 3)}`,
          p.threshold === undefined ? "–" : `>= ${fmt(p.threshold, 3)}`,
          fmt(p.aRps),
          fmt(p.bRps),
          fmt(p.aCpuUs),
          fmt(p.bCpuUs),
          String(p.non2xx),
        ]),
      ),
    );
  }
  if (report.peers) out.push(...renderPeers(report.peers, s));
  if (report.auth) {
    out.push("");
    out.push("### 1–2. Authentication overhead and the cookie + PostgreSQL alternative");
    out.push("");
    out.push(table(ROW_HEADER, report.auth.map(rowCells)));
  }
  if (report.identity) {
    const id = report.identity.result;
    out.push("");
    out.push("### 3. Identity");
    out.push("");
    out.push(table(ROW_HEADER, [rowCells(report.identity.row)]));
    out.push("");
    out.push(
      `DB round trips per get-session ${fmt(id.dbRoundTripsPerGetSession, 2)} (statements ${fmt(id.statementsPerGetSession, 2)}); per JWKS request ${fmt(id.dbRoundTripsPerJwks, 2)}. ` +
        `Sign-in (n=${id.signInMs.n}, sequential): p50 ${fmt(id.signInMs.p50, 1)} ms, p99 ${fmt(id.signInMs.p99, 1)} ms, mean ${fmt(id.signInMs.mean, 1)} ms; password KDF ${id.kdf}.`,
    );
  }
  if (report.jwks) {
    const j = report.jwks;
    out.push("");
    out.push("### 4. Key-set traffic under an unknown-kid flood");
    out.push("");
    out.push(
      table(
        ["flood", "req/s", "status codes", "JWKS fetches (allowed)", "fetch times (s from start)", "valid-token probes non-2xx"],
        [
          [
            `${j.floodSec} s on api-1`,
            fmt(j.flood.rps),
            Object.entries(j.flood.statusCodes)
              .map(([k, v]) => `${k}: ${v}`)
              .join(", "),
            `${j.fetches} (${j.allowed})`,
            j.fetchOffsetsSec.map((t) => t.toFixed(1)).join(", ") || "none",
            `${j.probeNon2xx} / ${j.probes}`,
          ],
        ],
      ),
    );
  }
  if (report.streaming) {
    const st = report.streaming;
    out.push("");
    out.push("### 5. Streaming (subscribers on api-1, events posted on api-2)");
    out.push("");
    out.push(
      table(
        [
          "kind",
          "connections open (failed)",
          "RSS per connection",
          "events delivered / expected",
          "delivery p50 ms",
          "delivery p99 ms",
          "max ms",
          "after commit p50 / p99 ms",
        ],
        [
          [
            "WebSocket",
            `${st.ws.opened} (${st.ws.failed})`,
            `${fmt(st.ws.kiBPerConnection, 1)} KiB`,
            `${st.publish.ws.received} / ${st.publish.ws.expected}`,
            fmt(st.publish.ws.p50, 1),
            fmt(st.publish.ws.p99, 1),
            fmt(st.publish.ws.max, 1),
            `${fmt(st.publish.ws.afterCommitP50, 1)} / ${fmt(st.publish.ws.afterCommitP99, 1)}`,
          ],
          [
            "SSE",
            `${st.sse.opened} (${st.sse.failed})`,
            `${fmt(st.sse.kiBPerConnection, 1)} KiB`,
            `${st.publish.sse.received} / ${st.publish.sse.expected}`,
            fmt(st.publish.sse.p50, 1),
            fmt(st.publish.sse.p99, 1),
            fmt(st.publish.sse.max, 1),
            `${fmt(st.publish.sse.afterCommitP50, 1)} / ${fmt(st.publish.sse.afterCommitP99, 1)}`,
          ],
        ],
      ),
    );
    out.push("");
    out.push(
      `api-1 RSS before ${fmt(st.rssBeforeKiB / 1024, 1)} MiB; ${st.publish.posts} posts on api-2 (${st.publish.postNon2xx} non-2xx; ` +
        `POST wall time p50 ${fmt(st.publish.postMs.p50, 1)} ms, p99 ${fmt(st.publish.postMs.p99, 1)} ms, included in the delivery latency); api-1 CPU during delivery ${fmt(st.api1CpuMsDuringPublish)} ms.` +
        (st.ws.firstError ? ` First WebSocket error: ${st.ws.firstError}.` : "") +
        (st.sse.firstError ? ` First SSE error: ${st.sse.firstError}.` : ""),
    );
  }
  if (report.memory) {
    const mem = report.memory;
    out.push("");
    out.push("### 6. Memory (api-1)");
    out.push("");
    out.push(
      table(
        [
          "fresh",
          "idle (key set loaded)",
          `after ${mem.cachedTokens} requests, one token`,
          `with ${mem.cachedTokens} cached tokens`,
          "per cached token (RSS)",
          "per cached token (reference heap after GC)",
        ],
        [
          [
            `${fmt(mem.apiFreshKiB / 1024, 1)} MiB`,
            `${fmt(mem.apiIdleKiB / 1024, 1)} MiB`,
            `${fmt(mem.apiWarmKiB / 1024, 1)} MiB`,
            `${fmt(mem.apiCachedKiB / 1024, 1)} MiB`,
            `${fmt(mem.apiBytesPerCachedToken)} B`,
            `${fmt(mem.refHeapBytesPerCachedToken)} B`,
          ],
        ],
      ),
    );
  }
  if (report.profile) {
    out.push("");
    out.push(`### Profiles (\`--cpu-prof\`, files under \`${report.profile.dir.replace(/^.*?(artifacts\/)/, "$1")}\`)`);
    for (const [title, p] of [
      ["API /api/me, cold tokens", report.profile.apiCold],
      ["API /api/me, repeated token", report.profile.apiHot],
      ["identity get-session", report.profile.identityGetSession],
    ] as const) {
      if (!p) continue;
      out.push("");
      out.push(`**${title}** — ${fmt(p.totalMs)} ms non-idle CPU sampled.`);
      out.push("");
      out.push(
        table(
          ["top self-time frames", "% non-idle"],
          p.frames.slice(0, 12).map((f) => [`\`${f.name}\``, fmt(f.pct, 1)]),
        ),
      );
      out.push("");
      out.push(
        `By package: ${p.packages
          .slice(0, 10)
          .map((x) => `${x.name} ${fmt(x.pct, 1)}%`)
          .join(", ")}. Inclusive: ${Object.entries(p.watched)
          .map(([k, v]) => `${k} ${fmt(v, 1)}%`)
          .join(", ")}.`,
      );
    }
  }
  out.push("");
  out.push("### Targets");
  out.push("");
  out.push(
    table(
      ["target", "verdict", "measured"],
      targets(report).map((t) => [t.name, t.verdict === "MISS" ? "**MISS**" : t.verdict, t.detail]),
    ),
  );
  out.push("");
  return out.join("\n");
}
