import { describe, expect, it } from "vitest";
import { createTaskBody, generateBody, pageQuery, setRolesBody, updateTaskBody, wsClientMessage } from "./index.js";

describe("business schemas", () => {
  it("requires only a title to create a task", () => {
    expect(createTaskBody.parse({ title: "  Ship it " })).toEqual({ title: "Ship it" });
    expect(createTaskBody.safeParse({}).success).toBe(false);
    expect(createTaskBody.safeParse({ title: "x", status: "nope" }).success).toBe(false);
    expect(createTaskBody.safeParse({ title: "x", userId: "someone-else" }).success).toBe(false);
    expect(updateTaskBody.safeParse({}).success).toBe(false);
  });

  it("bounds pagination and coerces query strings", () => {
    expect(pageQuery.parse({})).toEqual({ limit: 20 });
    expect(pageQuery.parse({ limit: "100", cursor: "abc" })).toEqual({ limit: 100, cursor: "abc" });
    expect(pageQuery.safeParse({ limit: "0" }).success).toBe(false);
    expect(pageQuery.safeParse({ limit: "101" }).success).toBe(false);
  });

  it("parses WebSocket client messages and normalises role sets", () => {
    expect(wsClientMessage.parse({ type: "subscribe", taskId: "t", lastEventId: "42" })).toEqual({
      type: "subscribe",
      taskId: "t",
      lastEventId: "42",
    });
    expect(wsClientMessage.safeParse({ type: "subscribe", taskId: "t", lastEventId: "x" }).success).toBe(false);
    expect(wsClientMessage.safeParse({ type: "shout" }).success).toBe(false);
    expect(setRolesBody.parse({ roles: ["support", "admin", "admin"] })).toEqual({ roles: ["admin", "support"] });
    expect(generateBody.safeParse({ prompt: "" }).success).toBe(false);
  });
});
