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
  /** Verified tokens not stored by {@link VerifiedTokenCache.admit} because it was their first sighting. */
  readonly deferred: number;
}

interface Entry {
  readonly value: VerifiedToken;
  readonly expiresAt: number;
}

/** Slots of the "seen once" table per cache entry bound (a power of two at least this fraction). */
const SEEN_SLOTS_PER_ENTRY = 1 / 8;
const MIN_SEEN_SLOTS = 64;
const MAX_SEEN_SLOTS = 65_536;
/** Characters of the token's end that are hashed: a JWT ends with its signature, unique per token. */
const FINGERPRINT_CHARS = 32;

/**
 * 32-bit FNV-1a of the length and the last {@link FINGERPRINT_CHARS} characters, never 0 (0 marks
 * an empty slot). A collision only lets a verified token in on its first sighting: harmless.
 */
function fingerprint(token: string): number {
  let hash = Math.imul(0x811c9dc5 ^ token.length, 0x01000193);
  for (let i = Math.max(0, token.length - FINGERPRINT_CHARS); i < token.length; i += 1) {
    hash = Math.imul(hash ^ token.charCodeAt(i), 0x01000193);
  }
  return hash === 0 ? 1 : hash;
}

function seenSlots(maxEntries: number): number {
  let slots = MIN_SEEN_SLOTS;
  while (slots < maxEntries * SEEN_SLOTS_PER_ENTRY && slots < MAX_SEEN_SLOTS) slots *= 2;
  return slots;
}

/**
 * A bounded LRU map from a whole token string to what verifying it produced. The full token is the
 * key, so two different tokens can never share an entry. An entry is served until its `expiresAt`
 * (the token's expiry) or until {@link VerifiedTokenCache.dropKids} removes its kid. A bound of 0
 * disables the cache.
 *
 * The verifier stores through {@link VerifiedTokenCache.admit}: a token is stored on its second
 * sighting only. The first one is remembered in a small fixed "seen once" table (a direct-mapped
 * array of 32-bit fingerprints, maxEntries / 8 slots, no allocation per token), so a flood of
 * one-shot tokens, or a rotation through more tokens than the bound, neither evicts the entries
 * in use nor keeps thousands of results alive; a token used twice within about that many other
 * first sightings is cached as before.
 */
export class VerifiedTokenCache {
  /** Most entries held at once; the least recently used is evicted beyond it. */
  readonly maxEntries: number;
  readonly #entries = new Map<string, Entry>();
  /** Fingerprints of tokens verified once and not stored yet; 0 = empty slot. */
  readonly #seen: Int32Array;
  #hits = 0;
  #misses = 0;
  #evictions = 0;
  #deferred = 0;

  /** @param maxEntries - bound (integer >= 0); 0 disables caching. */
  constructor(maxEntries: number = DEFAULT_VERIFIED_CACHE_MAX_ENTRIES) {
    if (!Number.isInteger(maxEntries) || maxEntries < 0) {
      throw new TypeError("maxEntries must be an integer >= 0");
    }
    this.maxEntries = maxEntries;
    this.#seen = new Int32Array(maxEntries === 0 ? 0 : seenSlots(maxEntries));
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

  /**
   * The admission policy of the verifier: stores `token` (as {@link VerifiedTokenCache.set}) only if
   * it was seen before, i.e. on its second verification; on the first one it only remembers the
   * token's fingerprint. An entry already held is replaced.
   * @returns true when stored.
   */
  admit(token: string, value: VerifiedToken, expiresAt: number, nowMs: number): boolean {
    if (this.maxEntries === 0 || !(expiresAt > nowMs)) return false;
    if (!this.#entries.has(token)) {
      const print = fingerprint(token);
      const slot = print & (this.#seen.length - 1);
      if (this.#seen[slot] !== print) {
        this.#seen[slot] = print;
        this.#deferred += 1;
        return false;
      }
      this.#seen[slot] = 0;
    }
    this.set(token, value, expiresAt, nowMs);
    return true;
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

  /** Removes every entry and forgets every sighting. */
  clear(): void {
    this.#entries.clear();
    this.#seen.fill(0);
  }

  /** Counters for diagnostics and benchmarks. */
  stats(): VerifiedTokenCacheStats {
    return {
      size: this.#entries.size,
      hits: this.#hits,
      misses: this.#misses,
      evictions: this.#evictions,
      deferred: this.#deferred,
    };
  }
}
