/**
 * The scenarios of `pnpm bench`, one file each, in the order a run takes them. Each one takes the
 * run context (context.ts) and returns its result; main.ts runs the selected ones and puts each
 * result where the report (report.ts) reads it.
 */
import type { RunReport } from "../report.js";
import type { Scenario } from "../settings.js";
import { authScenario } from "./auth.js";
import { type Ctx, summarizeVariant } from "./context.js";
import { identityScenario } from "./identity.js";
import { jwksScenario } from "./jwks.js";
import { memoryScenario } from "./memory.js";
import { microScenario } from "./micro.js";
import { pairsScenario } from "./pairs.js";
import { peersScenario } from "./peers.js";
import { profileScenario } from "./profile.js";
import { streamingScenario } from "./streaming.js";

/** One scenario: its name on the command line and how its result enters the report. */
export interface ScenarioEntry {
  name: Scenario;
  run(ctx: Ctx, report: RunReport): Promise<void>;
}

export const SCENARIO_ORDER: readonly ScenarioEntry[] = [
  {
    name: "micro",
    run: async (ctx, report) => {
      report.micro = await microScenario(ctx);
    },
  },
  {
    name: "memory",
    run: async (ctx, report) => {
      report.memory = await memoryScenario(ctx);
    },
  },
  {
    name: "pairs",
    run: async (ctx, report) => {
      report.pairs = await pairsScenario(ctx);
    },
  },
  {
    name: "peers",
    run: async (ctx, report) => {
      report.peers = await peersScenario(ctx);
    },
  },
  {
    name: "auth",
    run: async (ctx, report) => {
      const auth = await authScenario(ctx);
      const plain = auth.find((v) => v.key === "plain");
      report.auth = auth.map((v) => summarizeVariant(v, plain));
      const base = report.auth.find((r) => r.key === "plain");
      for (const r of report.auth) if (base) r.cpuRatio = base.cpuUs / (r.cpuUs + r.pgCpuUs);
    },
  },
  {
    name: "identity",
    run: async (ctx, report) => {
      const identity = await identityScenario(ctx);
      report.identity = { row: summarizeVariant(identity.getSession, undefined), result: identity };
    },
  },
  {
    name: "jwks",
    run: async (ctx, report) => {
      report.jwks = await jwksScenario(ctx);
    },
  },
  {
    name: "streaming",
    run: async (ctx, report) => {
      report.streaming = await streamingScenario(ctx);
    },
  },
  {
    name: "profile",
    run: async (ctx, report) => {
      report.profile = await profileScenario(ctx);
    },
  },
];
