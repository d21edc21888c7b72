import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { identityKit, type Kit } from "./kit.js";

// A passkey sign-in's options store a challenge row for a client nobody knows yet, on a GET as
// well as a POST: both count per IP, so one address cannot grow auth_challenge without bound.
let kit: Kit;

beforeAll(async () => {
  kit = await identityKit({ env: { RATE_LIMIT_IP_MAX: "3" } });
});
afterAll(async () => {
  await kit?.close();
});

describe("challenges per IP", () => {
  it("limits passkey sign-in options per address, GET and POST alike; another address is not affected", async () => {
    const options = (method: "get" | "post", ip: string) =>
      request(kit.app)[method]("/api/auth/passkey/generate-authenticate-options").set("x-forwarded-for", ip);
    const statuses = [];
    for (const method of ["get", "post", "get", "post"] as const) statuses.push((await options(method, "10.9.0.1")).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect((await options("get", "10.9.0.2")).status).toBe(200);
    expect(await kit.db.prisma.authChallenge.count()).toBe(4);
  });
});
