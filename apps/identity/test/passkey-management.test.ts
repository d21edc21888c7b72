import { randomUUID } from "node:crypto";
import { PASSKEY_MAX_PER_USER } from "@app/contracts";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { identityKit, type Kit, ORIGIN, signUp } from "./kit.js";
import { SoftwareAuthenticator } from "./webauthn-authenticator.js";

// The signed-in user's passkeys (list, rename, delete, the cap per user) and the rules around
// the ceremonies' options (signed-in only, a fresh session to add one), on real PostgreSQL.
// The app's clock is real time plus an offset a test moves (session age).

let kit: Kit;
let offset = 0;

beforeAll(async () => {
  kit = await identityKit({ now: () => Date.now() + offset });
});
afterAll(async () => {
  await kit?.close();
});

/** The `name=value` pairs a response sets, joined as a Cookie header with `cookie`. */
function withCookies(res: request.Response, cookie: string): string {
  const set = ((res.headers["set-cookie"] ?? []) as unknown as string[]).map((line) => line.split(";")[0]);
  return [cookie, ...set].join("; ");
}

const get = (path: string, cookie?: string) => {
  const req = request(kit.app).get(path).set("origin", ORIGIN);
  return cookie ? req.set("cookie", cookie) : req;
};
const post = (path: string, body: object, cookie?: string) => {
  const req = request(kit.app).post(path).set("origin", ORIGIN);
  return (cookie ? req.set("cookie", cookie) : req).send(body);
};

/** Registers a passkey for the user of `cookie` with a new authenticator. */
async function addPasskey(cookie: string, name?: string) {
  const options = await get("/api/auth/passkey/generate-register-options", cookie).expect(200);
  const response = new SoftwareAuthenticator("ES256", ORIGIN).registrationJSON(options.body);
  const res = await post("/api/auth/passkey/verify-registration", { response, ...(name ? { name } : {}) }, withCookies(options, cookie));
  expect(res.status, res.text).toBe(200);
  return res.body as { id: string; name: string | null; credentialID: string };
}

describe("a user's passkeys", () => {
  it("lists, renames and deletes them; another user's answer 404 and stay as they are", async () => {
    const owner = await signUp(kit.app);
    const first = await addPasskey(owner.cookie, "Phone");
    const second = await addPasskey(owner.cookie);
    expect(second.name).toBeNull();

    const listed = await get("/api/auth/passkey/list-user-passkeys", owner.cookie).expect(200);
    expect(listed.body.map((p: { id: string }) => p.id)).toEqual([first.id, second.id]);
    expect(listed.body[0]).toMatchObject({ name: "Phone", userId: owner.user.id, deviceType: "singleDevice", backedUp: false });
    expect(Buffer.from(listed.body[0].publicKey, "base64").length).toBeGreaterThan(64);

    const renamed = await post("/api/auth/passkey/update-passkey", { id: second.id, name: "  Laptop  " }, owner.cookie).expect(200);
    expect(renamed.body.passkey).toMatchObject({ id: second.id, name: "Laptop" });
    const empty = await post("/api/auth/passkey/update-passkey", { id: second.id, name: "   " }, owner.cookie);
    expect([empty.status, empty.body.code]).toEqual([400, "validation_failed"]);

    const intruder = await signUp(kit.app);
    const rename = await post("/api/auth/passkey/update-passkey", { id: first.id, name: "Mine now" }, intruder.cookie);
    expect([rename.status, rename.body.code]).toEqual([404, "not_found"]);
    const remove = await post("/api/auth/passkey/delete-passkey", { id: first.id }, intruder.cookie);
    expect([remove.status, remove.body.code]).toEqual([404, "not_found"]);
    expect((await get("/api/auth/passkey/list-user-passkeys", intruder.cookie).expect(200)).body).toEqual([]);
    expect(await kit.db.prisma.passkey.findUniqueOrThrow({ where: { id: first.id } })).toMatchObject({ name: "Phone" });

    expect((await post("/api/auth/passkey/delete-passkey", { id: first.id }, owner.cookie).expect(200)).body).toEqual({ status: true });
    const gone = await post("/api/auth/passkey/delete-passkey", { id: first.id }, owner.cookie);
    expect(gone.status).toBe(404);
    const left = await get("/api/auth/passkey/list-user-passkeys", owner.cookie).expect(200);
    expect(left.body.map((p: { id: string }) => p.id)).toEqual([second.id]);
  });

  it("answers 401 to a signed-out browser on every signed-in route", async () => {
    for (const res of [
      await get("/api/auth/passkey/generate-register-options"),
      await get("/api/auth/passkey/list-user-passkeys"),
      await post("/api/auth/passkey/verify-registration", {}),
      await post("/api/auth/passkey/update-passkey", { id: "x", name: "y" }),
      await post("/api/auth/passkey/delete-passkey", { id: "x" }),
    ])
      expect([res.status, res.body.code]).toEqual([401, "unauthorized"]);
  });

  it(`holds at most ${PASSKEY_MAX_PER_USER} passkeys per user`, async () => {
    const { cookie, user } = await signUp(kit.app);
    await kit.db.prisma.passkey.createMany({
      data: Array.from({ length: PASSKEY_MAX_PER_USER - 1 }, (_, i) => ({
        id: randomUUID(),
        userId: user.id,
        credentialId: `cap-${user.id}-${i}`,
        publicKey: new Uint8Array(77),
        deviceType: "singleDevice",
      })),
    });
    // Options for the last one are given; a second ceremony started meanwhile finds the cap at its end.
    const options = await get("/api/auth/passkey/generate-register-options", cookie).expect(200);
    await addPasskey(cookie);
    const refused = await get("/api/auth/passkey/generate-register-options", cookie);
    expect([refused.status, refused.body.code]).toEqual([409, "conflict"]);
    expect(refused.body.message).toContain(`at most ${PASSKEY_MAX_PER_USER}`);
    const response = new SoftwareAuthenticator("Ed25519", ORIGIN).registrationJSON(options.body);
    const late = await post("/api/auth/passkey/verify-registration", { response }, withCookies(options, cookie));
    expect([late.status, late.body.code]).toEqual([409, "conflict"]);
    expect(await kit.db.prisma.passkey.count({ where: { userId: user.id } })).toBe(PASSKEY_MAX_PER_USER);
  });

  it("adds a passkey only within the fresh age of the session's sign-in", async () => {
    const { cookie } = await signUp(kit.app);
    offset = kit.config.factors.deleteFreshAgeMs + 60_000;
    try {
      const res = await get("/api/auth/passkey/generate-register-options", cookie);
      expect([res.status, res.body.code]).toEqual([403, "session_not_fresh"]);
      expect((await get("/api/auth/passkey/list-user-passkeys", cookie)).status).toBe(200);
    } finally {
      offset = 0;
    }
  });

  it("lists a signed-in user's passkeys in the sign-in options (GET and POST); none for a stranger", async () => {
    const { cookie } = await signUp(kit.app);
    const added = await addPasskey(cookie);
    const mine = await get("/api/auth/passkey/generate-authenticate-options", cookie).expect(200);
    expect(mine.body).toMatchObject({ rpId: "localhost", userVerification: "required" });
    expect(mine.body.allowCredentials).toEqual([{ id: added.credentialID, type: "public-key", transports: ["internal"] }]);
    const posted = await post("/api/auth/passkey/generate-authenticate-options", {}, cookie).expect(200);
    expect(posted.body.allowCredentials).toHaveLength(1);
    const stranger = await get("/api/auth/passkey/generate-authenticate-options").expect(200);
    expect(stranger.body.allowCredentials ?? []).toEqual([]);
    expect(stranger.headers["cache-control"]).toBe("no-store");
  });
});
