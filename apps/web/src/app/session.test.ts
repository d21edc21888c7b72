import { ApiError } from "@app/client";
import { describe, expect, it } from "vitest";
import { endsSession, reportSessionEnd, sessionEndWords, setSessionEndHandler, TOKEN_DAYS, withinInterval } from "./session.js";

describe("the words of an ended session", () => {
  it("say how soon this app signs out elsewhere, from SESSION_RECHECK_SECONDS", () => {
    expect(withinInterval(60)).toBe("within a minute");
    expect(withinInterval(1)).toBe("within a second");
    expect(withinInterval(30)).toBe("within 30 seconds");
    expect(withinInterval(120)).toBe("within 2 minutes");
    expect(sessionEndWords(60).app).toBe(
      "This app signs out on your other devices within a minute, or as soon as it is opened there again.",
    );
  });

  it("say that a copied token lasts until it expires, and name the document that says why", () => {
    expect(TOKEN_DAYS).toBe(30);
    const { token } = sessionEndWords(60);
    expect(token).toContain("keeps working until it expires, up to 30 days");
    expect(token).toContain("docs/accounts.md");
  });
});

describe("a refusal that ends the session", () => {
  it("is any 401 but a wrong email, password or code, or an expired pending second factor", () => {
    expect(endsSession(new ApiError(401, "unauthorized", "x"))).toBe(true);
    expect(endsSession(new ApiError(401, "token_expired", "x"))).toBe(true);
    expect(endsSession(new ApiError(401, "invalid_credentials", "x"))).toBe(false);
    // A wrong first code while setting up an authenticator app must not sign the page out.
    expect(endsSession(new ApiError(401, "invalid_code", "x"))).toBe(false);
    expect(endsSession(new ApiError(401, "invalid_two_factor_cookie", "x"))).toBe(false);
    expect(endsSession(new ApiError(403, "forbidden", "x"))).toBe(false);
    expect(endsSession(new Error("x"))).toBe(false);
  });

  it("goes to the registered handler, which says whether it took over", () => {
    const seen: unknown[] = [];
    let signedIn = true;
    setSessionEndHandler((error) => {
      seen.push(error);
      return signedIn;
    });
    const ended = new ApiError(401, "unauthorized", "x");
    expect(reportSessionEnd(ended)).toBe(true);
    expect(reportSessionEnd(new ApiError(400, "bad_request", "x"))).toBe(false);
    signedIn = false;
    expect(reportSessionEnd(ended)).toBe(false);
    expect(seen).toEqual([ended, ended]);
  });
});
