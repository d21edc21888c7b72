import type { NextFunction, Request, RequestHandler, Response } from "express";
import { describe, expect, it } from "vitest";
import { inOrder } from "./in-order.js";

const req = {} as Request;
const res = {} as Response;

/** Runs the chain and resolves with what it passed to its own next. */
function run(chain: RequestHandler): Promise<unknown> {
  return new Promise((resolve) => chain(req, res, ((error?: unknown) => resolve(error ?? "done")) as NextFunction));
}

describe("inOrder", () => {
  it("runs each middleware in turn, also after one that calls next later", async () => {
    const seen: string[] = [];
    const chain = inOrder([
      (_q, _s, next) => {
        seen.push("a");
        next();
      },
      (_q, _s, next) => {
        setTimeout(() => {
          seen.push("b");
          next();
        }, 1);
      },
      (_q, _s, next) => {
        seen.push("c");
        next();
      },
    ]);
    expect(await run(chain)).toBe("done");
    expect(seen).toEqual(["a", "b", "c"]);
  });

  it("ends the chain at an error passed, thrown or rejected", async () => {
    const never: RequestHandler = () => {
      throw new Error("not reached");
    };
    const passed = new Error("passed");
    expect(await run(inOrder([(_q, _s, next) => next(passed), never]))).toBe(passed);
    const thrown = new Error("thrown");
    expect(
      await run(
        inOrder([
          () => {
            throw thrown;
          },
          never,
        ]),
      ),
    ).toBe(thrown);
    const rejected = new Error("rejected");
    expect(await run(inOrder([async () => Promise.reject(rejected), never]))).toBe(rejected);
  });

  it("stops where a middleware answers without calling next", async () => {
    let reached = false;
    const chain = inOrder([
      () => undefined,
      () => {
        reached = true;
      },
    ]);
    const outcome = await Promise.race([run(chain), new Promise((resolve) => setImmediate(() => resolve("stopped")))]);
    expect([outcome, reached]).toEqual(["stopped", false]);
  });
});
