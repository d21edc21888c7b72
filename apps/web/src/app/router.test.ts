import { describe, expect, it } from "vitest";
import { parseRoute, taskHref } from "./router.js";

describe("parseRoute", () => {
  it("maps hashes to views, with the task list as the default", () => {
    expect(parseRoute("")).toEqual({ name: "tasks", params: {} });
    expect(parseRoute("#/signin")).toEqual({ name: "signin", params: {} });
    expect(parseRoute("#/admin")).toEqual({ name: "admin", params: {} });
    expect(parseRoute("#/nowhere")).toEqual({ name: "tasks", params: {} });
  });

  it("round-trips a task id through taskHref, escaping it", () => {
    expect(taskHref("a/b c")).toBe("#/tasks/a%2Fb%20c");
    expect(parseRoute(taskHref("a/b c"))).toEqual({ name: "task", params: { id: "a/b c" } });
  });
});
