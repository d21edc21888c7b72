import { describe, expect, it } from "vitest";
import { serviceLogFormat } from "./launch.js";

describe("the services' log format under the launcher", () => {
  it("asks for readable lines when the launcher writes to a terminal in development", () => {
    expect(serviceLogFormat({}, true)).toEqual({ LOG_FORMAT: "pretty" });
    expect(serviceLogFormat({ NODE_ENV: "development" }, true)).toEqual({ LOG_FORMAT: "pretty" });
  });

  it("leaves JSON alone in production, behind a pipe (CI, supervisors) and when LOG_FORMAT is set", () => {
    expect(serviceLogFormat({ NODE_ENV: "production" }, true)).toEqual({});
    expect(serviceLogFormat({}, false)).toEqual({});
    expect(serviceLogFormat({ LOG_FORMAT: "json" }, true)).toEqual({ LOG_FORMAT: "json" });
  });
});
