import { AsyncLocalStorage } from "node:async_hooks";

/** What every log line of a request is tagged with. */
export interface RequestContext {
  requestId: string;
  /** The verified user id, once authentication succeeded. */
  userId?: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs `fn` inside a fresh request context. */
export function runWithContext<T>(context: RequestContext, fn: () => T): T {
  return storage.run(context, fn);
}

/** The current request's context, if any. */
export function currentContext(): RequestContext | undefined {
  return storage.getStore();
}

/** Records the verified user id on the current request context (used by every auth entry). */
export function setContextUser(userId: string): void {
  const store = storage.getStore();
  if (store) store.userId = userId;
}
