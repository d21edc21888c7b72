import type { JWTPayload } from "jose";

/** What a verified token says: the caller's user id (`sub`), all claims, and the signing key id. */
export interface VerifiedToken {
  /** The `sub` claim: the only claim server code may trust (contract, "Resources", rule 1). */
  readonly userId: string;
  /** Every claim of the token, deeply frozen. Claims other than `sub` may be stale. */
  readonly claims: Readonly<JWTPayload>;
  /** The `kid` of the key that verified the signature. */
  readonly kid: string;
}

/** Default bound of the verified-token cache. */
export const DEFAULT_VERIFIED_CACHE_MAX_ENTRIES = 10_000;

/** Counters of a {@link VerifiedTokenCache}. */
export interface VerifiedTokenCacheStats {
  /** Entries held now. */
  readonly size: number;
  /** Lookups answered from the cache. */
  readonly hits: number;
  /** Lookups not answered (absent or expired). */
  readonly misses: number;
  /** Entries pushed out by the LRU bound. */
  readonly evictions: number;
}

interface Entry {
  readonly value: VerifiedToken;
  readonly expiresAt: number;
}

/**
 * A bounded LRU map from a whole token string to what verifying it produced. The full token is the
 * key, so two different tokens can never share an entry. An entry is served until its `expiresAt`
 * (the token's expiry) or until {@link VerifiedTokenCache.dropKids} removes its kid. A bound of 0
 * disables the cache.
 */
export class VerifiedTokenCache {
  /** Most entries held at once; the least recently used is evicted beyond it. */
  readonly maxEntries: number;
  readonly #entries = new Map<string, Entry>();
  #hits = 0;
  #misses = 0;
  #evictions = 0;

  /** @param maxEntries - bound (integer >= 0); 0 disables caching. */
  constructor(maxEntries: number = DEFAULT_VERIFIED_CACHE_MAX_ENTRIES) {
    if (!Number.isInteger(maxEntries) || maxEntries < 0) {
      throw new TypeError("maxEntries must be an integer >= 0");
    }
    this.maxEntries = maxEntries;
  }

  /** Entries held now. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * The cached result for `token`, or undefined when absent or expired at `nowMs` (an expired
   * entry is removed). A hit becomes the most recently used entry.
   */
  get(token: string, nowMs: number): VerifiedToken | undefined {
    const entry = this.#entries.get(token);
    if (entry === undefined) {
      this.#misses += 1;
      return undefined;
    }
    this.#entries.delete(token);
    if (nowMs >= entry.expiresAt) {
      this.#misses += 1;
      return undefined;
    }
    this.#entries.set(token, entry);
    this.#hits += 1;
    return entry.value;
  }

  /** True when `token` has an entry (expired or not); counts nothing and changes no order. */
  has(token: string): boolean {
    return this.#entries.has(token);
  }

  /**
   * Stores a verified result until `expiresAt` (epoch ms). Does nothing when disabled or already
   * expired at `nowMs`. Evicts least recently used entries beyond the bound.
   */
  set(token: string, value: VerifiedToken, expiresAt: number, nowMs: number): void {
    if (this.maxEntries === 0 || !(expiresAt > nowMs)) return;
    this.#entries.delete(token);
    this.#entries.set(token, { value, expiresAt });
    while (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done === true) break;
      this.#entries.delete(oldest.value);
      this.#evictions += 1;
    }
  }

  /** Removes every entry verified by one of `kids` (their key left the key set). Returns how many. */
  dropKids(kids: Iterable<string>): number {
    const dropped = new Set(kids);
    if (dropped.size === 0) return 0;
    let removed = 0;
    for (const [token, entry] of this.#entries) {
      if (dropped.has(entry.value.kid)) {
        this.#entries.delete(token);
        removed += 1;
      }
    }
    return removed;
  }

  /** Removes every entry. */
  clear(): void {
    this.#entries.clear();
  }

  /** Counters for diagnostics and benchmarks. */
  stats(): VerifiedTokenCacheStats {
    return { size: this.#entries.size, hits: this.#hits, misses: this.#misses, evictions: this.#evictions };
  }
}
