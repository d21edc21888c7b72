import { currentContext, runWithContext } from "@app/http-kit";
import { describe, expect, it } from "vitest";
import { type AuthTarget, type AuthUser, createAuthenticate } from "./authenticate.js";

const alice = { userId: "alice", kid: "k1", claims: { sub: "alice" } } as unknown as AuthUser;
const bob = { userId: "bob", kid: "k1", claims: { sub: "bob" } } as unknown as AuthUser;

/** A verifier answering a repeated token synchronously and any other with a promise. */
const verifier = {
  verifyNow(authorization: string | undefined) {
    if (authorization === "Bearer hot") return alice;
    if (authorization === "Bearer cold") return Promise.resolve(alice);
    if (authorization === "Bearer gone") return Promise.resolve(bob);
    throw Object.assign(new Error("no token"), { name: "AuthVerifyError", code: "missing_token" });
  },
};
const authenticate = createAuthenticate(verifier, { has: (userId) => userId === "bob" });

describe("createAuthenticate", () => {
  it("records the admitted user on the target and the request context, synchronously for a repeated token", () => {
    const into: AuthTarget = {};
    const context = { requestId: "r1" } as { requestId: string; userId?: string };
    const user = runWithContext(context, () => authenticate("Bearer hot", into));
    expect(user).toBe(alice);
    expect(into.auth).toBe(alice);
    expect(context.userId).toBe("alice");
  });

  it("records a user jose verified once its one promise settles, inside the request context", async () => {
    const into: AuthTarget = {};
    const context = { requestId: "r2" } as { requestId: string; userId?: string };
    const pending = runWithContext(context, () => authenticate("Bearer cold", into));
    expect(pending).toBeInstanceOf(Promise);
    expect(into.auth).toBeUndefined();
    await expect(pending).resolves.toBe(alice);
    expect([into.auth, context.userId]).toEqual([alice, "alice"]);
    expect(currentContext()).toBeUndefined();
  });

  it("refuses a deleted account and a missing token with their codes, recording nothing", async () => {
    const into: AuthTarget = {};
    await expect(authenticate("Bearer gone", into)).rejects.toMatchObject({ code: "unauthorized", status: 401 });
    expect(() => authenticate(undefined, into)).toThrow(expect.objectContaining({ code: "missing_token", status: 401 }));
    expect(into.auth).toBeUndefined();
  });
});

describe("createAuthenticate(...).andThen", () => {
  it("runs the rest of the route after recording the user: at once for a repeated token, in the verification's reaction for a cold one", async () => {
    const hot: AuthTarget = {};
    expect(authenticate.andThen("Bearer hot", hot, () => hot.auth)).toBe(alice);
    const cold: AuthTarget = {};
    const pending = authenticate.andThen("Bearer cold", cold, () => cold.auth);
    expect(pending).toBeInstanceOf(Promise);
    await expect(pending).resolves.toBe(alice);
  });

  it("refuses with the verifier's code or the deleted account, never running the rest; the rest's own error passes unchanged", async () => {
    let ran = 0;
    const rest = () => {
      ran += 1;
    };
    expect(() => authenticate.andThen(undefined, {}, rest)).toThrow(expect.objectContaining({ code: "missing_token", status: 401 }));
    await expect(authenticate.andThen("Bearer gone", {}, rest)).rejects.toMatchObject({ code: "unauthorized", status: 401 });
    expect(ran).toBe(0);
    const own = new Error("handler failed");
    await expect(
      authenticate.andThen("Bearer cold", {}, () => {
        throw own;
      }),
    ).rejects.toBe(own);
  });
});
