import request from "supertest";
import { describe, expect, it } from "vitest";
import { ORIGIN, sessionCookie } from "./kit.js";
import { pathOf } from "./mail-kit.js";
import { fresh, mailboxProof, mailKitPerFile, NOTHING_LEFT, SQUATTER_PASSWORD } from "./mailbox-proof-kit.js";

// Pre-account takeover (docs/accounts.md "When the mailbox owner proves the address"): whoever
// registered an address first keeps nothing once its owner proves the mailbox with a magic
// link, as with the verification link opened without a session: the squatter's password,
// sessions, provider links, passkeys, second factor and pending links end, then the address is
// verified. Real PostgreSQL, real SMTP to a catcher.
const PAGE = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

const kit = mailKitPerFile();
const { post, linkFor, signedIn, squat, holdings } = mailboxProof(kit);

describe("a magic link to an account whose address nobody proved", () => {
  it("used by better-auth's client: the squatter keeps nothing; the owner gets in with the one session", async () => {
    const email = fresh("link-owner");
    const squatter = await squat(email);
    const link = await linkFor(email);
    // The page a scanner or a browser gets changes nothing yet.
    await request(kit.app).get(pathOf(link)).set("accept", PAGE).expect(200);
    expect((await holdings(squatter.userId)).providers).toEqual(["credential", "local"]);

    const res = await request(kit.app).get(pathOf(link)).set("accept", "application/json").expect(200);
    expect(res.body.user).toMatchObject({ id: squatter.userId, emailVerified: true });
    expect(await holdings(squatter.userId)).toEqual({
      user: { emailVerified: true, twoFactorEnabled: false },
      providers: [],
      sessions: 1,
      ...NOTHING_LEFT,
    });
    expect(await signedIn(squatter.cookie)).toBe(false);
    expect(await signedIn(sessionCookie(res) ?? "")).toBe(true);
    expect((await post("/sign-in/email", { email, password: SQUATTER_PASSWORD })).status).toBe(401);
  });

  it("clicked on the one-click page: the same, and the browser goes to the callback signed in", async () => {
    const email = fresh("click-owner");
    const squatter = await squat(email);
    const link = await linkFor(email, { callbackURL: `${ORIGIN}/home` });
    const click = await request(kit.app).post(pathOf(link)).set("origin", ORIGIN).expect(303);
    expect(click.headers.location).toBe(`${ORIGIN}/home`);
    expect(await holdings(squatter.userId)).toMatchObject({ providers: [], sessions: 1, ...NOTHING_LEFT });
    expect(await signedIn(squatter.cookie)).toBe(false);
    expect(await signedIn(sessionCookie(click) ?? "")).toBe(true);
  });
});
