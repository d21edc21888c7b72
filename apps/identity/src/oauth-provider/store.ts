import { AsyncLocalStorage } from "node:async_hooks";
import { createHmac, hkdfSync } from "node:crypto";
import type { Prisma, PrismaClient } from "@app/db";
import { SecretBox } from "@app/secret-box";
import { type Adapter, type AdapterPayload, errors } from "oidc-provider";

/**
 * The models whose id is the bearer value itself (oidc-provider's opaque format: the token is
 * its jti): their rows are keyed by an HMAC of it, and the jti is never written, so a copy of the
 * table holds no usable token.
 */
const TOKEN_KINDS = new Set([
  "AccessToken",
  "RefreshToken",
  "AuthorizationCode",
  "ClientCredentials",
  "DeviceCode",
  "BackchannelAuthenticationRequest",
  "RegistrationAccessToken",
  "InitialAccessToken",
]);

/** Models found by something other than their value (a device code by its user code): their jti is kept sealed. */
const FOUND_BY_USER_CODE = new Set(["DeviceCode"]);

/** Payload members the store adds for itself and takes off again before oidc-provider reads a row. */
const REGISTRANT = "x_registrant";
const SEALED_JTI = "x_sealed_jti";

/** HKDF salt shared with packages/secret-box and services/sessions.ts; the infos below are this store's own. */
const KDF_SALT = "token-auth-service";

/** Advisory lock that serialises client registrations, so the caps hold under concurrency. */
const REGISTRATION_LOCK = 0x6f617574; // "oaut"

/** How many dynamically registered clients the server keeps. */
export interface ClientLimits {
  /** Clients in all. */
  maxClients: number;
  /** Clients one registrant (client IP, IPv6 by /56) holds at once. */
  maxClientsPerRegistrant: number;
  /** A client older than this with no live grant is deleted by {@link OAuthStore.purgeExpired}. */
  unusedClientTtlMs: number;
}

export const DEFAULT_CLIENT_LIMITS: ClientLimits = {
  maxClients: 50_000,
  maxClientsPerRegistrant: 50,
  unusedClientTtlMs: 24 * 60 * 60 * 1000,
};

interface Row {
  payload: AdapterPayload;
  consumed_at: Date | null;
}

const text = (value: unknown): string | null => (typeof value === "string" && value ? value : null);

/**
 * oidc-provider's state on PostgreSQL (table `oauth_payload`, one row per model instance, keyed by
 * kind and id): sessions, interactions, grants, dynamically registered clients and the tokens it
 * stores (authorization codes, refresh tokens, opaque access tokens, registration access tokens).
 * A token's row is keyed by an HMAC of its value under a key derived from AUTH_SECRET; a client's
 * secret is sealed under AUTH_SECRET (oidc-provider compares it in clear, so it cannot be hashed).
 * The columns beside the payload (grant_id, uid, user_code, account_id, client_id, expires_at,
 * consumed_at) serve the lookups oidc-provider makes and the user's list of authorized apps.
 */
export class OAuthStore {
  readonly #db: PrismaClient;
  readonly #key: Buffer;
  readonly #box: SecretBox;
  readonly #limits: ClientLimits;
  /** The registrant of the client a request registers (oauth-provider/routes.ts sets it), for the caps. */
  readonly registrant = new AsyncLocalStorage<string>();
  /** The transaction oidc-provider's writes join while {@link inTransaction} runs (clients aside: they lock on their own). */
  readonly #transaction = new AsyncLocalStorage<Prisma.TransactionClient>();

  constructor(deps: { prisma: PrismaClient; authSecret: string; limits?: ClientLimits }) {
    this.#db = deps.prisma;
    this.#key = Buffer.from(hkdfSync("sha256", deps.authSecret, KDF_SALT, "oauth-token-hmac", 32));
    this.#box = new SecretBox(deps.authSecret, "oauth-provider");
    this.#limits = deps.limits ?? DEFAULT_CLIENT_LIMITS;
  }

  /**
   * Runs `work` in one transaction that the writes oidc-provider makes meanwhile (a Grant saved)
   * join, so they commit together with what `work` writes itself (the consent's security event).
   */
  inTransaction<T>(work: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
    return this.#db.$transaction((tx) => this.#transaction.run(tx, () => work(tx)));
  }

  /** The key of a token's row: HMAC-SHA256 of its value. */
  tokenKey(value: string): string {
    return createHmac("sha256", this.#key).update(value).digest("base64url");
  }

  /** The key under which a registrant (a client IP) is counted: an HMAC, so no address is stored. */
  registrantKey(clientIp: string): string {
    return createHmac("sha256", this.#key).update(`registrant:${clientIp}`).digest("base64url").slice(0, 32);
  }

  /** oidc-provider's adapter of one model (its `adapter` setting calls this once per model). */
  adapter(kind: string): Adapter {
    const hashed = TOKEN_KINDS.has(kind);
    const keyOf = (id: string) => (hashed ? this.tokenKey(id) : id);
    const restore = (row: Row | undefined, id: string | undefined): AdapterPayload | undefined => {
      if (!row) return undefined;
      const payload: AdapterPayload = { ...row.payload };
      if (hashed) {
        const sealed = payload[SEALED_JTI];
        delete payload[SEALED_JTI];
        const jti = id ?? (typeof sealed === "string" ? this.#box.open(sealed, `jti:${kind}`) : undefined);
        if (jti === undefined) return undefined;
        payload.jti = jti;
      }
      if (row.consumed_at) payload.consumed = Math.floor(row.consumed_at.getTime() / 1000);
      return kind === "Client" ? this.#openClient(payload) : payload;
    };
    const live = (rows: Row[]) => rows[0];
    const byId = async (key: string) =>
      live(
        await this.#db.$queryRaw<Row[]>`SELECT "payload", "consumed_at" FROM "oauth_payload"
WHERE "kind" = ${kind} AND "id" = ${key} AND ("expires_at" IS NULL OR "expires_at" > now())`,
      );
    return {
      upsert: async (id, payload, expiresIn) => {
        const stored: AdapterPayload = { ...payload };
        if (hashed) {
          delete stored.jti;
          if (FOUND_BY_USER_CODE.has(kind)) stored[SEALED_JTI] = this.#box.seal(id, `jti:${kind}`);
        }
        const expiresAt = expiresIn ? new Date(Date.now() + expiresIn * 1000) : null;
        if (kind === "Client") await this.#saveClient(id, stored);
        else await this.#write(this.#transaction.getStore() ?? this.#db, kind, keyOf(id), stored, expiresAt);
      },
      find: async (id) => restore(await byId(keyOf(id)), id),
      findByUid: async (uid) =>
        restore(
          live(
            await this.#db.$queryRaw<Row[]>`SELECT "payload", "consumed_at" FROM "oauth_payload"
WHERE "kind" = ${kind} AND "uid" = ${uid} AND ("expires_at" IS NULL OR "expires_at" > now()) LIMIT 1`,
          ),
          undefined,
        ),
      findByUserCode: async (userCode) =>
        restore(
          live(
            await this.#db.$queryRaw<Row[]>`SELECT "payload", "consumed_at" FROM "oauth_payload"
WHERE "kind" = ${kind} AND "user_code" = ${userCode} AND ("expires_at" IS NULL OR "expires_at" > now()) LIMIT 1`,
          ),
          undefined,
        ),
      consume: async (id) => {
        await this.#db.$executeRaw`UPDATE "oauth_payload" SET "consumed_at" = now() WHERE "kind" = ${kind} AND "id" = ${keyOf(id)}`;
      },
      destroy: async (id) => {
        await this.#db.$executeRaw`DELETE FROM "oauth_payload" WHERE "kind" = ${kind} AND "id" = ${keyOf(id)}`;
      },
      revokeByGrantId: async (grantId) => {
        await this.#db.$executeRaw`DELETE FROM "oauth_payload" WHERE "kind" = ${kind} AND "grant_id" = ${grantId}`;
      },
    };
  }

  /**
   * Deletes expired rows (tokens, codes, sessions, interactions, grants past their lifetime, kept
   * until then so a replayed code or rotated refresh token is still recognised) and clients
   * registered more than `unusedClientTtlMs` ago that hold no live grant, with their registration
   * access tokens. Returns how many rows went.
   */
  async purgeExpired(): Promise<number> {
    const expired = await this.#db.$executeRaw`DELETE FROM "oauth_payload" WHERE "expires_at" <= now()`;
    const cutoff = new Date(Date.now() - this.#limits.unusedClientTtlMs);
    const [unused] = await this.#db.$queryRaw<{ count: number }[]>`
WITH clients AS (
  DELETE FROM "oauth_payload" AS c
  WHERE c."kind" = 'Client' AND c."created_at" <= ${cutoff}
    AND NOT EXISTS (
      SELECT 1 FROM "oauth_payload" AS g
      WHERE g."kind" = 'Grant' AND g."client_id" = c."id" AND (g."expires_at" IS NULL OR g."expires_at" > now())
    )
  RETURNING c."id"
), tokens AS (
  DELETE FROM "oauth_payload" WHERE "kind" = 'RegistrationAccessToken' AND "client_id" IN (SELECT "id" FROM clients)
  RETURNING 1
)
SELECT ((SELECT count(*) FROM clients) + (SELECT count(*) FROM tokens))::int AS "count"`;
    return expired + (unused?.count ?? 0);
  }

  async #write(
    db: Pick<PrismaClient, "$executeRaw">,
    kind: string,
    key: string,
    payload: AdapterPayload,
    expiresAt: Date | null,
  ): Promise<void> {
    const clientId = text(payload.clientId) ?? (kind === "Client" ? key : null);
    await db.$executeRaw`
INSERT INTO "oauth_payload" ("kind", "id", "payload", "grant_id", "user_code", "uid", "account_id", "client_id", "expires_at")
VALUES (${kind}, ${key}, ${JSON.stringify(payload)}::jsonb, ${text(payload.grantId)}, ${text(payload.userCode)}, ${text(payload.uid)},
  ${text(payload.accountId)}, ${clientId}, ${expiresAt})
ON CONFLICT ("kind", "id") DO UPDATE SET "payload" = EXCLUDED."payload", "grant_id" = EXCLUDED."grant_id",
  "user_code" = EXCLUDED."user_code", "uid" = EXCLUDED."uid", "account_id" = EXCLUDED."account_id",
  "client_id" = EXCLUDED."client_id", "expires_at" = EXCLUDED."expires_at"`;
  }

  /**
   * Stores a registered client: its secret sealed, its registrant noted, within the caps (429
   * `invalid_request` past either), checked and written under one advisory lock.
   */
  async #saveClient(id: string, payload: AdapterPayload): Promise<void> {
    if (typeof payload.client_secret === "string") payload.client_secret = this.#box.seal(payload.client_secret, `client:${id}`);
    const registrant = this.registrant.getStore();
    if (registrant) payload[REGISTRANT] = registrant;
    const limits = this.#limits;
    await this.#db.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${REGISTRATION_LOCK})`;
      const [counts] = await tx.$queryRaw<{ total: number; mine: number }[]>`
SELECT count(*)::int AS "total", count(*) FILTER (WHERE "payload"->>${REGISTRANT} = ${registrant ?? ""})::int AS "mine"
FROM "oauth_payload" WHERE "kind" = 'Client' AND "id" <> ${id}`;
      if ((counts?.total ?? 0) >= limits.maxClients) {
        throw new errors.InvalidRequest("the server holds as many clients as it allows; try again later", 429);
      }
      if (registrant && (counts?.mine ?? 0) >= limits.maxClientsPerRegistrant) {
        throw new errors.InvalidRequest("this address holds as many clients as it may; use one it registered", 429);
      }
      await this.#write(tx, "Client", id, payload, null);
    });
  }

  /** A client's metadata as oidc-provider reads it: its secret opened, the store's own members off. */
  #openClient(payload: AdapterPayload): AdapterPayload {
    delete payload[REGISTRANT];
    const id = String(payload.client_id ?? "");
    if (typeof payload.client_secret === "string") {
      const secret = this.#box.open(payload.client_secret, `client:${id}`);
      // A secret sealed under another AUTH_SECRET opens no more: the client cannot authenticate.
      if (secret === undefined) delete payload.client_secret;
      else payload.client_secret = secret;
    }
    return payload;
  }
}
