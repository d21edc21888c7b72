/** A scope as a person reads it on the consent page and in the list of authorized apps. */
export interface ScopeWords {
  scope: string;
  /** What the app may do, starting with a verb ("Read your projects, tasks and chats"). */
  title: string;
  /** One more sentence of what that means. */
  detail: string;
  /**
   * Granted with any consent: identity keeps `openid` whenever it was asked for
   * (apps/identity/src/oauth-provider/interactions.ts decideConsent), so the page offers no choice.
   */
  required: boolean;
}

/**
 * The scopes identity's authorization server grants (apps/identity/src/oauth-provider/settings.ts
 * SCOPES), what each releases (accounts.ts SCOPE_CLAIMS) and what the MCP server lets a token of
 * each do (packages/contracts/src/mcp-tools.ts MCP_TOOLS), in plain words.
 */
const WORDS: Record<string, Omit<ScopeWords, "scope">> = {
  openid: {
    title: "Know that it is you",
    detail: "It learns your account's identifier, so it recognizes you the next time.",
    required: true,
  },
  profile: { title: "See your name and picture", detail: "Your name and profile picture, as your account shows them.", required: false },
  email: { title: "See your email address", detail: "Your email address, and whether you have confirmed it.", required: false },
  offline_access: {
    title: "Stay connected when you are away",
    detail: "It may renew its access without asking you again, until you revoke it.",
    required: false,
  },
  "mcp:read": {
    title: "Read your projects, tasks and chats",
    detail: "Lists, searches and reads them, including those of your organizations.",
    required: false,
  },
  "mcp:write": {
    title: "Create tasks and post messages",
    detail: "Creates tasks and adds messages to tasks in your name, where you may write.",
    required: false,
  },
};

/** The words of one scope; a scope this page does not know is named as it is. */
export function scopeWords(scope: string): ScopeWords {
  const known = Object.hasOwn(WORDS, scope) ? WORDS[scope] : undefined;
  return known
    ? { scope, ...known }
    : { scope, title: `Use the permission “${scope}”`, detail: "This page has no description of it.", required: false };
}

/** The scopes of a space-separated `scope` parameter, each once, in the order given. */
export function scopesOf(scope: string | null | undefined): string[] {
  return [...new Set((scope ?? "").split(" ").filter(Boolean))];
}

/**
 * The `scope` the consent page sends for the boxes left ticked: undefined when that is every
 * scope asked for (identity then grants them all), else the chosen ones, space-separated.
 */
export function narrowedScope(requested: readonly string[], chosen: readonly string[]): string | undefined {
  const kept = requested.filter((scope) => chosen.includes(scope) || scopeWords(scope).required);
  return kept.length === requested.length ? undefined : kept.join(" ");
}
