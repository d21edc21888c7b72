import { AUTH_TOKEN_STORAGE_KEY } from "@app/contracts";

/** The part of the Web Storage API the client uses to keep the JWT (`localStorage` fits). */
export interface TokenStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** A storage that lives in memory only: for tests, servers and scripts. */
export function memoryStorage(initial: Record<string, string> = {}): TokenStorage {
  const items = new Map(Object.entries(initial));
  return {
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, value),
    removeItem: (key) => void items.delete(key),
  };
}

/** `globalThis.localStorage` when there is one (a browser), otherwise a fresh {@link memoryStorage}. */
export function defaultStorage(): TokenStorage {
  const candidate = (globalThis as { localStorage?: TokenStorage }).localStorage;
  return candidate ?? memoryStorage();
}

/** Listener told whenever the stored JWT changes (`null`: removed). */
export type TokenListener = (token: string | null) => void;

/**
 * Keeps the JWT under the contract's key (`authToken`) and tells listeners when it changes.
 */
export class TokenStore {
  readonly #storage: TokenStorage;
  readonly #key: string;
  readonly #listeners = new Set<TokenListener>();

  constructor(storage: TokenStorage, key: string = AUTH_TOKEN_STORAGE_KEY) {
    this.#storage = storage;
    this.#key = key;
  }

  /** The stored JWT, or null. */
  get(): string | null {
    const value = this.#storage.getItem(this.#key);
    return value ? value : null;
  }

  /** Stores (or, with null, removes) the JWT and notifies listeners when it changed. */
  set(token: string | null): void {
    const before = this.get();
    if (token) this.#storage.setItem(this.#key, token);
    else this.#storage.removeItem(this.#key);
    if (before !== token) for (const listener of this.#listeners) listener(token);
  }

  /** Subscribes to changes; returns the unsubscribe function. */
  subscribe(listener: TokenListener): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }
}
