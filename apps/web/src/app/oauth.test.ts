import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  AUTHORIZATION_RETURN_MS,
  authorizationReturnOf,
  authorizationWaiting,
  holdAuthorizationLanding,
  holdAuthorizationReturn,
  takeAuthorizationReturn,
} from "./authorization-return.js";
import { narrowedScope, scopesOf, scopeWords } from "./oauth-scopes.js";

/** The scopes identity's authorization server grants (apps/identity/src/oauth-provider/settings.ts). */
function identityScopes(): string[] {
  const source = readFileSync(new URL("../../../identity/src/oauth-provider/settings.ts", import.meta.url), "utf8");
  const list = (name: string) => /\[([^\]]*)\]/.exec(source.slice(source.indexOf(`export const ${name} =`)))?.[1] ?? "";
  return [...`${list("MCP_SCOPES")} ${list("SCOPES")}`.matchAll(/"([^"]+)"/g)].map((m) => m[1] ?? "");
}

describe("scopes in words", () => {
  it("has words for every scope identity grants; openid is the one always included", () => {
    const scopes = identityScopes();
    expect(scopes).toEqual(expect.arrayContaining(["openid", "profile", "email", "offline_access", "mcp:read", "mcp:write"]));
    for (const scope of scopes) expect(scopeWords(scope).title, scope).not.toMatch(/permission “/);
    expect(scopes.filter((scope) => scopeWords(scope).required)).toEqual(["openid"]);
    expect(scopeWords("mcp:read").title).toBe("Read your projects, tasks and chats");
    expect(scopeWords("mcp:write").title).toBe("Create tasks and post messages");
    expect(scopeWords("calendar").title).toBe("Use the permission “calendar”");
  });

  it("reads a scope parameter, and sends a narrower scope only when a box was unticked (openid stays)", () => {
    expect(scopesOf("openid  mcp:read openid")).toEqual(["openid", "mcp:read"]);
    expect(scopesOf(null)).toEqual([]);
    const requested = ["openid", "email", "mcp:read", "mcp:write"];
    expect(narrowedScope(requested, ["email", "mcp:read", "mcp:write"])).toBeUndefined();
    expect(narrowedScope(requested, ["mcp:read"])).toBe("openid mcp:read");
    expect(narrowedScope(requested, [])).toBe("openid");
    expect(narrowedScope(["mcp:read"], [])).toBe("");
  });
});

describe("an authorization request waiting for a sign-in", () => {
  const BASE = "http://localhost:3000";
  const STEP = `${BASE}/api/auth/oauth2/interaction/abc_123`;
  let store: Map<string, string>;
  const scope = globalThis as { sessionStorage?: Pick<Storage, "getItem" | "setItem" | "removeItem"> };
  beforeEach(() => {
    store = new Map();
    scope.sessionStorage = {
      getItem: (key) => store.get(key) ?? null,
      setItem: (key, value) => void store.set(key, value),
      removeItem: (key) => void store.delete(key),
    };
  });
  afterEach(() => {
    delete scope.sessionStorage;
  });

  it("follows only the service's own authorization steps", () => {
    expect(authorizationReturnOf(STEP, BASE)).toBe(STEP);
    expect(authorizationReturnOf(STEP, `${BASE}/`)).toBe(STEP);
    expect(authorizationReturnOf(null, BASE)).toBeUndefined();
    expect(authorizationReturnOf("https://evil.example/api/auth/oauth2/interaction/x", BASE)).toBeUndefined();
    expect(authorizationReturnOf("http://localhost:3001/api/auth/oauth2/interaction/x", BASE)).toBeUndefined();
    expect(authorizationReturnOf(`${BASE}/api/tasks`, BASE)).toBeUndefined();
    expect(authorizationReturnOf(`${BASE}/api/auth/oauth2`, BASE)).toBeUndefined();
    expect(authorizationReturnOf("http://user:pw@localhost:3000/api/auth/oauth2/interaction/x", BASE)).toBeUndefined();
    expect(authorizationReturnOf("javascript:alert(1)//localhost:3000/api/auth/oauth2/", BASE)).toBeUndefined();
    expect(authorizationReturnOf("/api/auth/oauth2/interaction/x", BASE)).toBeUndefined();
    expect(authorizationReturnOf("https://svc.example/auth/api/auth/oauth2/interaction/x", "https://svc.example/auth")).toBe(
      "https://svc.example/auth/api/auth/oauth2/interaction/x",
    );
  });

  it("is kept for the next sign-in, taken once, and forgotten once the request is too old", () => {
    holdAuthorizationReturn(STEP, 1_000);
    expect(authorizationWaiting(2_000)).toBe(true);
    expect(takeAuthorizationReturn(2_000)).toBe(STEP);
    expect(takeAuthorizationReturn(2_000)).toBeUndefined();
    expect(authorizationWaiting(2_000)).toBe(false);
    holdAuthorizationReturn(STEP, 1_000);
    expect(takeAuthorizationReturn(1_000 + AUTHORIZATION_RETURN_MS + 1)).toBeUndefined();
    expect(store.size).toBe(0);
    store.set("web.authorizationReturn", "not json");
    expect(takeAuthorizationReturn()).toBeUndefined();
  });

  it("is kept from the authorization server's sign-in landing only", () => {
    const search = `?callbackURL=${encodeURIComponent(STEP)}`;
    holdAuthorizationLanding("/", search, BASE);
    holdAuthorizationLanding("/sign-in/two-factor", search, BASE);
    holdAuthorizationLanding("/sign-in", `?callbackURL=${encodeURIComponent("https://evil.example/")}`, BASE);
    expect(authorizationWaiting()).toBe(false);
    holdAuthorizationLanding("/sign-in/", search, BASE);
    expect(takeAuthorizationReturn()).toBe(STEP);
  });

  it("does nothing without storage", () => {
    delete scope.sessionStorage;
    holdAuthorizationReturn(STEP);
    expect(takeAuthorizationReturn()).toBeUndefined();
  });
});
