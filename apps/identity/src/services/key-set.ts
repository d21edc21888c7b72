import { JWT_LIFETIME_SECONDS } from "@app/contracts";
import { type Jwks, Prisma, type PrismaClient } from "@app/db";
import { AppError, DEFAULT_KEY_ACTIVATION_DELAY_MS } from "@app/http-kit";
import { SecretBox } from "@app/secret-box";
import type { Logger } from "pino";
import { recordKeyChange } from "../security-events/key-changes.js";
import { newKeyRow, openKeyRow, type UsableKey } from "./key-seal.js";
import { announceKeySet } from "./key-set-events.js";
import { rawRows, type SqlPool } from "./raw-query.js";

/** A superseded key stays published for one token lifetime plus this skew, then drops out. */
export const ROTATION_SKEW_MS = 5 * 60 * 1000;
/**
 * How long a new key is published before it signs by default: the verifiers' JWKS cache max age
 * plus their refetch cooldown, defined once for both services in packages/http-kit/src/settings/token.ts.
 */
export { DEFAULT_KEY_ACTIVATION_DELAY_MS };

/** Advisory-lock key that serialises key creation across identity instances. */
const KEY_CREATION_LOCK = 0x6a776b73; // "jwks"

/** Defined with the sealing (key-seal.ts); services/tokens.ts and oauth-provider/provider.ts take it from here with {@link KeySetView}. */
export type { UsableKey };

/** What get-session and the JWKS route need from one read of the jwks table. */
export interface KeySetView {
  /**
   * The key that signs: the newest usable key published for at least the activation delay, or,
   * when no key is that old (first start, AUTH_SECRET changed), the oldest usable key.
   */
  signing: UsableKey;
  /** The keys to publish: the signer, newer keys waiting to sign, and keys superseded less than a token lifetime (+ skew) ago. */
  published: UsableKey[];
}

/** The jwks columns, as the hot read returns them. */
interface JwksRow {
  id: string;
  alg: string;
  public_key: string;
  private_key: string;
  created_at: Date;
  retired_at: Date | null;
}

/** get-session's key set read: every non-retired row, newest first, one round trip. */
const LIVE_KEYS = {
  name: "identity-live-jwks",
  text: `SELECT "id", "alg", "public_key", "private_key", "created_at", "retired_at" FROM "jwks"
WHERE "retired_at" IS NULL ORDER BY "created_at" DESC`,
  values: [],
} as const;

function toJwks(row: JwksRow): Jwks {
  return {
    id: row.id,
    alg: row.alg,
    publicKey: row.public_key,
    privateKey: row.private_key,
    createdAt: row.created_at,
    retiredAt: row.retired_at,
  };
}

/**
 * The signing key set, persisted in the jwks table with private keys sealed under AUTH_SECRET.
 * Every call reads the table once, so all identity instances agree; decrypted keys are cached
 * by kid. Rows the current secret cannot open (AUTH_SECRET changed) are retired: never served,
 * never used, and a fresh key is made so get-session keeps working. Every change is announced on
 * PostgreSQL NOTIFY when its transaction commits (key-set-events.ts), so verifiers refetch at once,
 * and is a `key_rotated` security event (`detail`: the kid, `step` created or retired, `reason`)
 * in the same transaction.
 *
 * Only rows that existed when this instance started are retired that way. A newer row it cannot
 * open was made by a peer running with another secret (a rolling secret change, or a
 * misconfigured replica): this instance leaves it alone and answers 503 until it is restarted
 * with the right secret, rather than retiring the peer's keys back and forth.
 */
export class KeySet {
  readonly #db: PrismaClient;
  readonly #pool: SqlPool | undefined;
  readonly #box: SecretBox;
  readonly #log: Logger;
  readonly #now: () => number;
  /** kid → decrypted key, or null when this secret cannot open the row. */
  readonly #opened = new Map<string, UsableKey | null>();
  /** Rows created after this moment that we cannot open belong to a peer with another secret. */
  readonly #startedAt: number;

  readonly #activationDelayMs: number;

  /**
   * @param deps - `pool`: the `pg` pool under `prisma` (`Db.pool`); the hot read of {@link KeySet.view}
   *   runs on it as raw SQL (without it, through Prisma's raw query API).
   */
  constructor(deps: {
    prisma: PrismaClient;
    pool?: SqlPool;
    authSecret: string;
    logger: Logger;
    now?: () => number;
    activationDelayMs?: number;
  }) {
    this.#db = deps.prisma;
    this.#pool = deps.pool;
    this.#box = new SecretBox(deps.authSecret, "jwks-private-key");
    this.#log = deps.logger;
    this.#now = deps.now ?? Date.now;
    this.#startedAt = this.#now();
    this.#activationDelayMs = deps.activationDelayMs ?? DEFAULT_KEY_ACTIVATION_DELAY_MS;
  }

  /** When a key starts signing (it is published from its creation on). */
  activatesAt(key: Pick<UsableKey, "createdAt">): Date {
    return new Date(key.createdAt.getTime() + this.#activationDelayMs);
  }

  /**
   * Reads the key set (one raw SQL query in the steady state, never memoized: every instance sees
   * the table as it is now), repairing it when needed.
   */
  async view(): Promise<KeySetView> {
    const rows = (await rawRows<JwksRow>(this.#db, this.#pool, LIVE_KEYS)).map(toJwks);
    const view = await this.#classify(rows);
    if (view) return view;
    return this.#repair();
  }

  /**
   * Makes a new key now (rotation). It is published at once and signs once it is older than the
   * activation delay; the previous key then stays published for one token lifetime plus skew.
   */
  async rotate(): Promise<UsableKey> {
    const row = await this.#db.$transaction(async (tx) => {
      const created = await tx.jwks.create({ data: newKeyRow(this.#box, new Date(this.#now())) });
      await announceKeySet(tx, "rotated", [created.id]);
      await recordKeyChange(tx, created.id, { step: "created", reason: "manual" }, created.createdAt);
      return created;
    });
    const key = this.#open(row);
    if (!key) throw new Error("a key made by this instance cannot be opened");
    this.#log.info({ kid: row.id, signsFrom: this.activatesAt(key).toISOString() }, "signing key rotated");
    return key;
  }

  /**
   * Rotates when the newest usable key is at least `maxAgeMs` old (the `KEY_ROTATION_DAYS`
   * interval). Serialised across instances by an advisory lock, so a fleet rotates once.
   * @returns the new key, or undefined when no rotation was due.
   */
  async rotateIfDue(maxAgeMs: number): Promise<UsableKey | undefined> {
    if (!(maxAgeMs > 0)) return undefined;
    const created = await this.#db.$transaction(
      async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(${KEY_CREATION_LOCK})`;
        const rows = await tx.jwks.findMany({ where: { retiredAt: null }, orderBy: { createdAt: "desc" } });
        const newest = rows.map((r) => this.#open(r)).find((k): k is UsableKey => k !== null);
        if (!newest || this.#now() - newest.createdAt.getTime() < maxAgeMs) return undefined;
        const row = await tx.jwks.create({ data: newKeyRow(this.#box, new Date(this.#now())) });
        await announceKeySet(tx, "rotated", [row.id]);
        await recordKeyChange(tx, row.id, { step: "created", reason: "interval" }, row.createdAt);
        return row;
      },
      { timeout: 15_000, maxWait: 10_000 },
    );
    if (!created) return undefined;
    const key = this.#open(created);
    if (key) this.#log.info({ kid: key.kid, signsFrom: this.activatesAt(key).toISOString() }, "signing key rotated (interval)");
    return key ?? undefined;
  }

  /** Marks superseded keys whose overlap has passed as retired. Returns how many. */
  async retireExpired(): Promise<number> {
    const rows = await this.#db.jwks.findMany({ where: { retiredAt: null }, orderBy: { createdAt: "desc" } });
    const usable = rows.map((r) => this.#open(r)).filter((k): k is UsableKey => k !== null);
    const keep = new Set(this.#publishable(usable).map((k) => k.kid));
    const drop = usable.filter((k) => !keep.has(k.kid)).map((k) => k.kid);
    if (!drop.length) return 0;
    return this.#retireRows(drop, "overlap_passed");
  }

  /** Marks rows retired, announces and records them in the same transaction; returns how many changed. */
  async #retireRows(kids: string[], reason: "overlap_passed" | "secret_changed"): Promise<number> {
    return this.#db.$transaction(async (tx) => {
      const now = new Date(this.#now());
      const retired = await tx.$queryRaw<{ id: string }[]>`
        UPDATE "jwks" SET "retired_at" = ${now} WHERE "id" IN (${Prisma.join(kids)}) AND "retired_at" IS NULL RETURNING "id"`;
      if (retired.length) await announceKeySet(tx, "retired", kids);
      for (const { id } of retired) await recordKeyChange(tx, id, { step: "retired", reason }, now);
      return retired.length;
    });
  }

  async #classify(rows: Jwks[]): Promise<KeySetView | undefined> {
    const usable: UsableKey[] = [];
    const unreadable: string[] = [];
    let foreign = 0;
    for (const row of rows) {
      const key = this.#open(row);
      if (key) usable.push(key);
      else if (row.createdAt.getTime() <= this.#startedAt) unreadable.push(row.id);
      else foreign += 1;
    }
    if (unreadable.length) await this.#retire(unreadable);
    const [signing] = usable;
    if (!signing && foreign) {
      this.#log.error(
        { foreign },
        "the key set was made by an instance with another AUTH_SECRET; restart this one with the current secret",
      );
      throw new AppError("service_unavailable", "signing keys are sealed with another AUTH_SECRET");
    }
    if (!signing) return undefined;
    return { signing: this.#signer(usable, signing), published: this.#publishable(usable) };
  }

  /** usable is newest first: the newest key past its activation delay, else the oldest one. */
  #signer(usable: UsableKey[], newest: UsableKey): UsableKey {
    const now = this.#now();
    return usable.find((k) => this.activatesAt(k).getTime() <= now) ?? usable.at(-1) ?? newest;
  }

  /**
   * usable is newest first. A key is superseded when its successor starts signing; it stays
   * published until a token lifetime (+ skew) after that, so every token it signed can be verified.
   */
  #publishable(usable: UsableKey[]): UsableKey[] {
    const overlapMs = JWT_LIFETIME_SECONDS * 1000 + ROTATION_SKEW_MS;
    const now = this.#now();
    return usable.filter((_key, i) => {
      const successor = usable[i - 1];
      return !successor || now < this.activatesAt(successor).getTime() + overlapMs;
    });
  }

  async #retire(kids: string[]): Promise<void> {
    const count = await this.#retireRows(kids, "secret_changed");
    if (count) this.#log.warn({ kids, count }, "retired signing keys that AUTH_SECRET no longer decrypts; earlier JWTs are invalid");
  }

  /** Creates the first usable key under an advisory lock, so racing instances make exactly one. */
  async #repair(): Promise<KeySetView> {
    await this.#db.$transaction(
      async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(${KEY_CREATION_LOCK})`;
        const rows = await tx.jwks.findMany({ where: { retiredAt: null }, orderBy: { createdAt: "desc" } });
        if (rows.some((r) => this.#open(r) || r.createdAt.getTime() > this.#startedAt)) return;
        const stale = rows.map((r) => r.id);
        // Keys made before that none can open now (retired here or by #classify): the secret changed.
        const replaced = (await tx.jwks.count()) > 0;
        const now = new Date(this.#now());
        if (stale.length) await tx.jwks.updateMany({ where: { id: { in: stale } }, data: { retiredAt: now } });
        await announceKeySet(tx, "retired", stale);
        for (const kid of stale) await recordKeyChange(tx, kid, { step: "retired", reason: "secret_changed" }, now);
        const row = await tx.jwks.create({ data: newKeyRow(this.#box, now) });
        await announceKeySet(tx, "created", [row.id]);
        await recordKeyChange(tx, row.id, { step: "created", reason: replaced ? "secret_changed" : "first_key" }, now);
        this.#log.info({ kid: row.id }, "created signing key");
      },
      { timeout: 15_000, maxWait: 10_000 },
    );
    const rows = await this.#db.jwks.findMany({ where: { retiredAt: null }, orderBy: { createdAt: "desc" } });
    const view = await this.#classify(rows);
    if (!view) throw new Error("key set has no usable key after repair");
    return view;
  }

  #open(row: Jwks): UsableKey | null {
    const cached = this.#opened.get(row.id);
    if (cached !== undefined) return cached;
    const key = openKeyRow(this.#box, row);
    this.#opened.set(row.id, key);
    return key;
  }
}
