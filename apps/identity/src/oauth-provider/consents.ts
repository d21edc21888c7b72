import type { PrismaClient } from "@app/db";
import { type RequestFacts, recordEvent } from "../security-events/record.js";

/** An application the user authorized (one oidc-provider Grant), as the consent routes answer it. */
export interface ConsentView {
  /** The grant's id: what get-consent and delete-consent take. */
  id: string;
  clientId: string;
  userId: string;
  /** The scopes granted (declined ones left out). */
  scopes: string[];
  createdAt: string;
  expiresAt: string | null;
  clientName?: string;
  clientUri?: string;
  logoUri?: string;
}

/** The parts of a Grant's payload (oidc-provider models/grant.js) that name its scopes. */
interface ScopeSet {
  openid?: { scope?: string };
  resources?: Record<string, string>;
}

interface GrantRow {
  id: string;
  client_id: string;
  account_id: string;
  payload: ScopeSet & { rejected?: ScopeSet };
  created_at: Date;
  expires_at: Date | null;
  client: { client_name?: unknown; client_uri?: unknown; logo_uri?: unknown } | null;
}

const words = (value: string | undefined) => (value ? value.split(" ").filter(Boolean) : []);
const textOf = (value: unknown) => (typeof value === "string" && value ? value : undefined);

/** The scopes a grant holds: its OpenID and resource scopes, less those the user declined (`openid` stays). */
function grantedScopes(payload: GrantRow["payload"]): string[] {
  const rejected = payload.rejected ?? {};
  const out = new Set<string>();
  const declinedOidc = new Set(words(rejected.openid?.scope));
  for (const scope of words(payload.openid?.scope)) if (scope === "openid" || !declinedOidc.has(scope)) out.add(scope);
  for (const [resource, scope] of Object.entries(payload.resources ?? {})) {
    const declined = new Set(words(rejected.resources?.[resource]));
    for (const s of words(scope)) if (!declined.has(s)) out.add(s);
  }
  return [...out];
}

function view(row: GrantRow): ConsentView {
  const client = row.client ?? {};
  const name = textOf(client.client_name);
  const uri = textOf(client.client_uri);
  const logo = textOf(client.logo_uri);
  return {
    id: row.id,
    clientId: row.client_id,
    userId: row.account_id,
    scopes: grantedScopes(row.payload),
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at?.toISOString() ?? null,
    ...(name ? { clientName: name } : {}),
    ...(uri ? { clientUri: uri } : {}),
    ...(logo ? { logoUri: logo } : {}),
  };
}

/**
 * The applications a user authorized, read from the grants oidc-provider keeps (table
 * `oauth_payload`, kind `Grant`, by account): listed, read one by one, revoked. Only the user's
 * own grants are ever read or revoked: another user's id answers as unknown.
 */
export class Consents {
  readonly #db: PrismaClient;

  constructor(prisma: PrismaClient) {
    this.#db = prisma;
  }

  /** The user's live grants, newest first, with their clients' names. */
  async list(userId: string): Promise<ConsentView[]> {
    const rows = await this.#db.$queryRaw<GrantRow[]>`
SELECT g."id", g."client_id", g."account_id", g."payload", g."created_at", g."expires_at", c."payload" AS "client"
FROM "oauth_payload" AS g
LEFT JOIN "oauth_payload" AS c ON c."kind" = 'Client' AND c."id" = g."client_id"
WHERE g."kind" = 'Grant' AND g."account_id" = ${userId} AND (g."expires_at" IS NULL OR g."expires_at" > now())
ORDER BY g."created_at" DESC, g."id"`;
    return rows.map(view);
  }

  /** One of the user's live grants, or undefined (unknown, expired or another user's). */
  async get(userId: string, id: string): Promise<ConsentView | undefined> {
    return (await this.list(userId)).find((consent) => consent.id === id);
  }

  /** The user's newest live grant to a client (a consent of an earlier browser session), for oidc-provider. */
  async latestGrantId(accountId: string, clientId: string): Promise<string | undefined> {
    const [row] = await this.#db.$queryRaw<{ id: string }[]>`
SELECT "id" FROM "oauth_payload"
WHERE "kind" = 'Grant' AND "account_id" = ${accountId} AND "client_id" = ${clientId} AND ("expires_at" IS NULL OR "expires_at" > now())
ORDER BY "created_at" DESC LIMIT 1`;
    return row?.id;
  }

  /**
   * Revokes the application of one of the user's grants: every grant the user gave that client,
   * with the codes, refresh tokens and opaque access tokens issued under them, in one statement,
   * and its `oauth_consent_revoked` event (the client and every scope its grants held) in the same
   * transaction. Its JWT access tokens are not stored and end at their expiry. False for an id
   * that is not one of the user's grants.
   */
  async revoke(userId: string, id: string, facts: RequestFacts, now: Date): Promise<boolean> {
    return this.#db.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<{ kind: string; client_id: string; payload: GrantRow["payload"] }[]>`
WITH target AS (
  SELECT "client_id" FROM "oauth_payload" WHERE "kind" = 'Grant' AND "id" = ${id} AND "account_id" = ${userId}
), grants AS (
  SELECT "id" FROM "oauth_payload"
  WHERE "kind" = 'Grant' AND "account_id" = ${userId} AND "client_id" IN (SELECT "client_id" FROM target)
)
DELETE FROM "oauth_payload"
WHERE ("kind" = 'Grant' AND "id" IN (SELECT "id" FROM grants)) OR "grant_id" IN (SELECT "id" FROM grants)
RETURNING "kind", "client_id", "payload"`;
      const gone = rows.filter((row) => row.kind === "Grant");
      const [first] = gone;
      if (!first) return false;
      const scopes = [...new Set(gone.flatMap((grant) => grantedScopes(grant.payload)))].join(" ");
      const detail = { clientId: first.client_id, scopes };
      await recordEvent(tx, { type: "oauth_consent_revoked", userId, detail }, facts, now);
      return true;
    });
  }
}
