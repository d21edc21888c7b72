import { describe, expect, it } from "vitest";
import { adminUserHref, chatHref, consentHref, invitationHref, landingHash, PUBLIC_ROUTES, parseRoute, taskHref } from "./router.js";

describe("parseRoute", () => {
  it("maps hashes to views, with the task list as the default", () => {
    expect(parseRoute("")).toEqual({ name: "tasks", params: {} });
    expect(parseRoute("#/signin")).toEqual({ name: "signin", params: {} });
    expect(parseRoute("#/admin")).toEqual({ name: "admin", params: {} });
    expect(parseRoute("#/nowhere")).toEqual({ name: "tasks", params: {} });
    for (const name of ["projects", "agents", "chats", "mcp", "settings", "upload", "generate"] as const) {
      expect(parseRoute(`#/${name}`)).toEqual({ name, params: {} });
    }
  });

  it("round-trips a task id through taskHref and a chat id through chatHref, escaping them", () => {
    expect(taskHref("a/b c")).toBe("#/tasks/a%2Fb%20c");
    expect(parseRoute(taskHref("a/b c"))).toEqual({ name: "task", params: { id: "a/b c" } });
    expect(parseRoute(chatHref("x/y"))).toEqual({ name: "chat", params: { id: "x/y" } });
  });

  it("ignores a query after the route (the MCP callback's ?mcp=connected)", () => {
    expect(parseRoute("#/mcp?mcp=connected&serverId=1")).toEqual({ name: "mcp", params: {} });
  });

  it("keeps the reset link's token or error, and maps the reset path to its hash", () => {
    expect(parseRoute("#/reset-password?token=abc")).toEqual({ name: "reset-password", params: { token: "abc" } });
    expect(parseRoute("#/reset-password?error=INVALID_TOKEN")).toEqual({ name: "reset-password", params: { error: "INVALID_TOKEN" } });
    for (const name of ["forgot-password", "account", "sessions"] as const) expect(parseRoute(`#/${name}`)).toEqual({ name, params: {} });
    expect(landingHash("/reset-password", "?token=abc")).toBe("#/reset-password?token=abc");
    expect(landingHash("/", "?verified=1")).toBeUndefined();
  });

  it("maps identity's second-factor page to its hash, dropping the callback (the app's start anyway)", () => {
    expect(landingHash("/sign-in/two-factor", "?callbackURL=http%3A%2F%2Flocalhost%3A5173%2F")).toBe("#/two-factor");
    expect(landingHash("/sign-in/two-factor/", "")).toBe("#/two-factor");
    expect(parseRoute("#/two-factor")).toEqual({ name: "two-factor", params: {} });
    expect(parseRoute("#/security")).toEqual({ name: "security", params: {} });
  });

  it("maps an invitation mail's link to the invitation page, which is open signed out", () => {
    expect(landingHash("/accept-invitation/inv_123", "")).toBe("#/accept-invitation/inv_123");
    expect(parseRoute("#/accept-invitation/inv_123")).toEqual({ name: "accept-invitation", params: { id: "inv_123" } });
    expect(parseRoute(invitationHref("a/b"))).toEqual({ name: "accept-invitation", params: { id: "a/b" } });
    expect(landingHash("/accept-invitation/", "")).toBeUndefined();
    expect(landingHash("/accept-invitation/a/b", "")).toBeUndefined();
    expect(PUBLIC_ROUTES.has("accept-invitation")).toBe(true);
    expect(PUBLIC_ROUTES.has("organization")).toBe(false);
  });

  it("maps the authorization server's consent page with its query unchanged, and its sign-in page to sign-in", () => {
    const query = "uid=u1&client_id=c1&scope=openid+mcp%3Aread&exp=1&ba_iat=1&ba_param=ba_iat&ba_param=ba_param&sig=a-b_c";
    expect(landingHash("/oauth/consent", `?${query}`)).toBe(`#/oauth/consent?${query}`);
    expect(parseRoute(`#/oauth/consent?${query}`)).toEqual({ name: "oauth-consent", params: { query } });
    expect(parseRoute(consentHref(query))).toEqual({ name: "oauth-consent", params: { query } });
    expect(parseRoute("#/oauth/consent")).toEqual({ name: "oauth-consent", params: { query: "" } });
    expect(PUBLIC_ROUTES.has("oauth-consent")).toBe(true);
    expect(landingHash("/sign-in", "?callbackURL=http%3A%2F%2Flocalhost%3A3000%2Fapi%2Fauth%2Foauth2%2Finteraction%2Fu1")).toBe("#/signin");
    expect(parseRoute("#/authorized-apps")).toEqual({ name: "authorized-apps", params: {} });
    expect(PUBLIC_ROUTES.has("authorized-apps")).toBe(false);
  });

  it("maps the organization page and the admin's user pages", () => {
    expect(parseRoute("#/organization")).toEqual({ name: "organization", params: {} });
    expect(parseRoute("#/admin/users")).toEqual({ name: "admin-users", params: {} });
    expect(parseRoute(adminUserHref("u 1"))).toEqual({ name: "admin-user", params: { id: "u 1" } });
    expect(parseRoute("#/admin")).toEqual({ name: "admin", params: {} });
  });
});
