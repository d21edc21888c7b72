import { describe, expect, it } from "vitest";
import { FLOW_TTL_SECONDS, type FlowState, FlowStateSealer } from "./flow-state.js";

const SECRET = "flow-state-test-secret-0123456789abcdef";
const flow: FlowState = {
  provider: "local",
  state: "state-value-0123456789",
  nonce: "nonce-value-0123456789",
  codeVerifier: "verifier-value-0123456789",
  callbackURL: "http://localhost:5173/",
  errorCallbackURL: "http://localhost:5173/error",
  newUserCallbackURL: "http://localhost:5173/welcome",
};

describe("sealed flow state", () => {
  it("opens what it sealed, and its value reveals none of it", async () => {
    const sealer = new FlowStateSealer(SECRET);
    const sealed = await sealer.seal(flow);
    for (const secret of [flow.state, flow.nonce, flow.codeVerifier, "localhost"]) expect(sealed).not.toContain(secret);
    expect(await sealer.open(sealed)).toMatchObject(flow);
  });

  it("refuses an altered value, another AUTH_SECRET's, an expired one and garbage", async () => {
    let now = Date.UTC(2026, 0, 1);
    const sealer = new FlowStateSealer(SECRET, () => now);
    const sealed = await sealer.seal(flow);
    const last = sealed.at(-2) === "A" ? "B" : "A";
    expect(await sealer.open(`${sealed.slice(0, -2)}${last}${sealed.at(-1)}`)).toBeUndefined();
    expect(await new FlowStateSealer(`${SECRET}-other`, () => now).open(sealed)).toBeUndefined();
    expect(await sealer.open("not-a-jwe")).toBeUndefined();
    expect(await sealer.open(undefined)).toBeUndefined();
    now += (FLOW_TTL_SECONDS + 1) * 1000;
    expect(await sealer.open(sealed)).toBeUndefined();
  });
});
