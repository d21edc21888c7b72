import type { CryptoKey } from "jose";
import { AuthVerifyError } from "./errors.js";
import { importKeys, type LoadedKey, parseJwksBody, readJwksBody } from "./jwks-body.js";

/** Default cache max age of a fetched key set: 10 minutes (contract, "Limits"). */
export const DEFAULT_CACHE_MAX_AGE_MS = 600_000;
/** Default minimum time between two fetch attempts: 30 seconds (contract, "Limits"). */
export const DEFAULT_COOLDOWN_MS = 30_000;
/**
 * Default stale-if-error window: 1 hour. A key set older than its max age whose refresh fails is
 * still used for this long past its max age (so at most max age + 1 hour after the last success).
 */
export const DEFAULT_STALE_IF_ERROR_MS = 3_600_000;
/** Default timeout of one key set fetch (request and body): 5 seconds. */
export const DEFAULT_FETCH_TIMEOUT_MS = 5_000;

/** What a successful key set refresh reports to listeners. */
export interface KeySetRefreshEvent {
  /** The kids of the new key set. */
  readonly kids: readonly string[];
  /** Kids of the previous set that are gone from the new one or whose key material changed. */
  readonly droppedKids: readonly string[];
}

/** Counters of a {@link RemoteKeySet}, for diagnostics and benchmarks. */
export interface RemoteKeySetStats {
  /** Fetch attempts started (successful or not). */
  readonly fetches: number;
  /** Fetch attempts that failed (network, timeout, status, body, or no usable key). */
  readonly failures: number;
  /** Usable keys in the current set (0 before the first success). */
  readonly keys: number;
  /** Clock time (ms) the last attempt started, or null if none. */
  readonly lastAttemptAt: number | null;
  /** Clock time (ms) the current set was loaded, or null if never. */
  readonly lastSuccessAt: number | null;
}

/** The subset of `fetch` the key set uses; inject one in tests. */
export type FetchLike = (input: URL, init: RequestInit) => Promise<Response>;

/** Options of a {@link RemoteKeySet}. */
export interface RemoteKeySetOptions {
  /** Where the public key set is served (an object with a `keys` array). http or https only. */
  url: string | URL;
  /** Age (ms) after which the set is refreshed on the next use. Default {@link DEFAULT_CACHE_MAX_AGE_MS}. */
  cacheMaxAgeMs?: number;
  /** Minimum time (ms) between two fetch attempts, successful or not. Default {@link DEFAULT_COOLDOWN_MS}. */
  cooldownMs?: number;
  /** How long (ms) past max age a set is still used while refreshes fail. Default {@link DEFAULT_STALE_IF_ERROR_MS}. */
  staleIfErrorMs?: number;
  /** Timeout (ms) of one fetch. Default {@link DEFAULT_FETCH_TIMEOUT_MS}. */
  fetchTimeoutMs?: number;
  /** Fetch implementation. Default: the global `fetch`. */
  fetch?: FetchLike;
  /** Clock in epoch milliseconds. Default `Date.now`. */
  now?: () => number;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** Called after each successful refresh (same as {@link RemoteKeySet.onRefresh}). */
  onRefresh?: (event: KeySetRefreshEvent) => void;
  /**
   * Told how every fetch attempt ended: true when it installed a usable set, false when it failed
   * (network, timeout, status, body, no usable key). For metrics: it must not throw.
   */
  onFetchOutcome?: (ok: boolean) => void;
}

interface LoadedSet {
  readonly loadedAt: number;
  readonly keys: ReadonlyMap<string, LoadedKey>;
}

function checkDuration(name: string, value: number, min: number): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < min) {
    throw new TypeError(`${name} must be a finite number >= ${min}`);
  }
  return value;
}

const noop = (): void => {};

/**
 * A remote JSON Web Key Set of Ed25519 public keys, kept in memory.
 *
 * - Fetched on first use, never at construction.
 * - A set older than `cacheMaxAgeMs` is refreshed on the next use.
 * - An unknown kid triggers a refresh, but at most one fetch attempt starts per `cooldownMs`
 *   (counting every attempt, failed ones too); concurrent callers share one in-flight fetch.
 * - Stale-if-error: when a refresh fails, the last good set stays in use until
 *   `cacheMaxAgeMs + staleIfErrorMs` after it was loaded. `jwks_unavailable` is reported only when
 *   no set was ever loaded or that window has passed.
 * - A response that is not 2xx, not JSON, has no `keys` array, or holds no usable Ed25519 key is a
 *   failure (the previous set is kept).
 */
export class RemoteKeySet {
  /** The key set address. */
  readonly url: URL;
  readonly #cacheMaxAgeMs: number;
  readonly #cooldownMs: number;
  readonly #staleIfErrorMs: number;
  readonly #fetchTimeoutMs: number;
  readonly #fetch: FetchLike;
  readonly #now: () => number;
  readonly #headers: Record<string, string>;
  readonly #listeners = new Set<(event: KeySetRefreshEvent) => void>();
  readonly #onFetchOutcome: ((ok: boolean) => void) | undefined;
  readonly #closer = new AbortController();
  #set: LoadedSet | undefined;
  #inflight: Promise<void> | undefined;
  /** The fetch {@link RemoteKeySet.refreshNow} started in the current turn (its request is not sent yet). */
  #joinable: Promise<void> | undefined;
  /** The one fetch {@link RemoteKeySet.refreshNow} queued behind a fetch in flight. */
  #queued: Promise<void> | undefined;
  #lastAttemptAt: number | undefined;
  #lastError: unknown;
  #fetches = 0;
  #failures = 0;

  /** @param options - see {@link RemoteKeySetOptions}; nothing is fetched here. */
  constructor(options: RemoteKeySetOptions) {
    const url = new URL(options.url);
    if (url.protocol !== "https:" && url.protocol !== "http:") {
      throw new TypeError("jwks url must be http or https");
    }
    this.url = url;
    this.#cacheMaxAgeMs = checkDuration("cacheMaxAgeMs", options.cacheMaxAgeMs ?? DEFAULT_CACHE_MAX_AGE_MS, 1);
    this.#cooldownMs = checkDuration("cooldownMs", options.cooldownMs ?? DEFAULT_COOLDOWN_MS, 0);
    this.#staleIfErrorMs = checkDuration("staleIfErrorMs", options.staleIfErrorMs ?? DEFAULT_STALE_IF_ERROR_MS, 0);
    this.#fetchTimeoutMs = checkDuration("fetchTimeoutMs", options.fetchTimeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS, 1);
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#now = options.now ?? Date.now;
    this.#headers = { accept: "application/json", ...options.headers };
    if (options.onRefresh) this.#listeners.add(options.onRefresh);
    this.#onFetchOutcome = options.onFetchOutcome;
  }

  /**
   * The verification key for `kid`. Refreshes the set first when it is missing or older than max
   * age, or when `kid` is unknown and the cooldown allows a fetch.
   * @throws AuthVerifyError `unknown_key` when the usable set has no such kid,
   *   `jwks_unavailable` (503) when no usable set exists.
   */
  async getKey(kid: string): Promise<CryptoKey> {
    const fresh = this.peekKey(kid);
    if (fresh !== undefined) return fresh;
    await this.#refreshIfAllowed();
    const usable = this.#usableSet();
    const hit = usable.keys.get(kid);
    if (hit === undefined) throw new AuthVerifyError("unknown_key");
    return hit.key;
  }

  /**
   * The key for `kid` when the current set is fresh (younger than its max age) and holds it, without
   * waiting: what {@link RemoteKeySet.getKey} answers at once. Undefined when `getKey` would have to
   * fetch, wait for a fetch, or refuse; call `getKey` then.
   */
  peekKey(kid: string): CryptoKey | undefined {
    const set = this.#set;
    if (set === undefined || this.#closer.signal.aborted || this.#now() - set.loadedAt >= this.#cacheMaxAgeMs) return undefined;
    return set.keys.get(kid)?.key;
  }

  /** {@link RemoteKeySet.refreshNow}, by its older name (a warm-up at start, or after an operator rotated keys). */
  reload(): Promise<void> {
    return this.refreshNow();
  }

  /**
   * Fetches the set at once, ignoring the cooldown: the hook for a push announcement of a key
   * change (created, retired, rotated). Not reachable from requests; it is rate-limited anyway.
   *
   * A fetch already in flight may have left before the change, so it is not joined: one fetch is
   * queued behind it, and every call made meanwhile shares that queued fetch. Calls in the same
   * turn share one fetch (its request has not been sent yet). So a burst of calls costs at most one
   * fetch in flight plus one queued. After a successful fetch, kids no longer published are
   * dropped and listeners are told (the verifier's cache drops their tokens); new kids are usable.
   * @throws AuthVerifyError `jwks_unavailable` when the fetch fails or the set is closed; the
   *   current set is kept and stale-if-error applies as for any failed refresh.
   */
  refreshNow(): Promise<void> {
    if (this.#joinable !== undefined) return this.#joinable;
    if (this.#queued !== undefined) return this.#queued;
    const ahead = this.#inflight;
    if (ahead === undefined) {
      const started = this.#announcedFetch();
      this.#joinable = started;
      queueMicrotask(() => {
        if (this.#joinable === started) this.#joinable = undefined;
      });
      return started;
    }
    const queued = ahead.catch(noop).then(() => {
      this.#queued = undefined;
      return this.#announcedFetch();
    });
    this.#queued = queued;
    return queued;
  }

  /** One fetch for {@link RemoteKeySet.refreshNow}, its failure as `jwks_unavailable`. */
  #announcedFetch(): Promise<void> {
    if (this.#closer.signal.aborted) {
      return Promise.reject(new AuthVerifyError("jwks_unavailable", "The key set is closed"));
    }
    return this.#startFetch().catch((cause: unknown) => {
      throw new AuthVerifyError("jwks_unavailable", undefined, { cause });
    });
  }

  /**
   * Subscribes to successful refreshes (e.g. to drop cached tokens whose kid vanished).
   * @returns a function that unsubscribes.
   */
  onRefresh(listener: (event: KeySetRefreshEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /**
   * True while the current set is younger than its max age (no refresh due). A verified-token
   * cache asks this before serving a hit, so a cached verification never outlives its key set.
   */
  isFresh(): boolean {
    const set = this.#set;
    return set !== undefined && !this.#closer.signal.aborted && this.#now() - set.loadedAt < this.#cacheMaxAgeMs;
  }

  /** The kids of the current set (empty before the first success). */
  kids(): string[] {
    return this.#set ? [...this.#set.keys.keys()] : [];
  }

  /** Counters for diagnostics and benchmarks. */
  stats(): RemoteKeySetStats {
    return {
      fetches: this.#fetches,
      failures: this.#failures,
      keys: this.#set?.keys.size ?? 0,
      lastAttemptAt: this.#lastAttemptAt ?? null,
      lastSuccessAt: this.#set?.loadedAt ?? null,
    };
  }

  /** Aborts a fetch in flight and drops listeners; later calls fail with `jwks_unavailable`. */
  close(): void {
    this.#closer.abort();
    this.#listeners.clear();
  }

  #usableSet(): LoadedSet {
    const set = this.#set;
    if (this.#closer.signal.aborted) throw new AuthVerifyError("jwks_unavailable", "The key set is closed");
    if (set === undefined || this.#now() >= set.loadedAt + this.#cacheMaxAgeMs + this.#staleIfErrorMs) {
      const cause = this.#lastError;
      throw new AuthVerifyError("jwks_unavailable", undefined, cause === undefined ? undefined : { cause });
    }
    return set;
  }

  /** Joins the fetch in flight, or starts one when the cooldown allows; never rejects. */
  async #refreshIfAllowed(): Promise<void> {
    if (this.#inflight === undefined) {
      if (this.#closer.signal.aborted) return;
      const last = this.#lastAttemptAt;
      if (last !== undefined && this.#now() - last < this.#cooldownMs) return;
      this.#startFetch();
    }
    await this.#inflight?.catch(noop);
  }

  #startFetch(): Promise<void> {
    this.#lastAttemptAt = this.#now();
    this.#fetches += 1;
    const attempt = this.#load().then(
      (keys) => {
        this.#install(keys);
        this.#reportFetch(true);
      },
      (error: unknown) => {
        this.#failures += 1;
        this.#lastError = error;
        this.#reportFetch(false);
        throw error;
      },
    );
    const tracked = attempt.finally(() => {
      if (this.#inflight === tracked) this.#inflight = undefined;
    });
    tracked.catch(noop);
    this.#inflight = tracked;
    return tracked;
  }

  #reportFetch(ok: boolean): void {
    try {
      this.#onFetchOutcome?.(ok);
    } catch {
      // An observer that fails must not change what the fetch did.
    }
  }

  async #load(): Promise<Map<string, LoadedKey>> {
    const signal = AbortSignal.any([this.#closer.signal, AbortSignal.timeout(this.#fetchTimeoutMs)]);
    const response = await this.#fetch(this.url, { headers: this.#headers, signal, redirect: "manual" });
    if (!response.ok) {
      await response.body?.cancel().catch(noop);
      throw new Error(`JWKS endpoint answered HTTP ${response.status}`);
    }
    const keys = await importKeys(parseJwksBody(await readJwksBody(response)), this.#set?.keys);
    if (keys.size === 0) throw new Error("JWKS holds no usable Ed25519 signing key");
    return keys;
  }

  #install(keys: Map<string, LoadedKey>): void {
    const previous = this.#set;
    this.#set = { loadedAt: this.#now(), keys };
    this.#lastError = undefined;
    const droppedKids: string[] = [];
    if (previous !== undefined) {
      for (const [kid, loaded] of previous.keys) {
        if (keys.get(kid) !== loaded) droppedKids.push(kid);
      }
    }
    const event: KeySetRefreshEvent = { kids: [...keys.keys()], droppedKids };
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // A failing listener must not break key refresh.
      }
    }
  }
}
