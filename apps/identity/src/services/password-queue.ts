import { AsyncLocalStorage } from "node:async_hooks";
import { availableParallelism } from "node:os";
import { AppError } from "@app/http-kit";
import { rateLimitRefusals } from "../metrics.js";

/** How many password hashes or verifications run at once, and how many may wait. */
export interface PasswordQueueLimits {
  /** Running at once. */
  concurrency: number;
  /** Waiting per client; one more answers 429 `rate_limited` with `Retry-After`. */
  maxQueuedPerClient: number;
  /** Waiting in total; one more answers 503 `service_unavailable` with `Retry-After`. */
  maxQueued: number;
}

const cores = availableParallelism();

/**
 * Defaults: one argon2 at a time per core but one (which is left to the event loop, so a flood of
 * password checks does not slow every other route down too), 32 waiting per client, 256 in all.
 */
export const PASSWORD_QUEUE_LIMITS: PasswordQueueLimits = { concurrency: Math.max(1, cores - 1), maxQueuedPerClient: 32, maxQueued: 256 };

/** Seconds a refused client is told to wait: a queue slot frees within one hash. */
const RETRY_AFTER_SECONDS = "1";
/** The client of work started outside a request (the warm-up hash at start). */
const NO_CLIENT = "";

/**
 * The queue's refusals in identity_rate_limit_refusals_total: `password-queue-client` (a client's
 * share is full: 429) and `password-queue-full` (the whole queue is: 503), both 0 from the start.
 */
const clientRefusals = rateLimitRefusals.labels("password-queue-client");
const fullRefusals = rateLimitRefusals.labels("password-queue-full");
clientRefusals.inc(0);
fullRefusals.inc(0);

interface Job {
  start(): void;
}

/**
 * Runs argon2 work (services/passwords.ts) at most `concurrency` at a time, with a fair queue:
 * each client (the client IP of the request, set by {@link PasswordQueue.asClient}) has its own
 * FIFO, and a free slot goes to the clients in turn. So a flood from one address waits behind
 * itself while another client's sign-in waits for at most one hash per other busy client, and
 * argon2 never takes every thread of the libuv pool that PostgreSQL's TLS, DNS and file I/O
 * also need. A full queue refuses at once instead of letting latency grow without bound.
 */
export class PasswordQueue {
  readonly #limits: PasswordQueueLimits;
  readonly #client = new AsyncLocalStorage<string>();
  /** Waiting jobs per client, in the order the clients get their turn. */
  readonly #waiting = new Map<string, Job[]>();
  #queued = 0;
  #running = 0;

  constructor(limits: PasswordQueueLimits = PASSWORD_QUEUE_LIMITS) {
    this.#limits = limits;
  }

  /** Runs `fn` (a request's handling) as `client`: password work it starts is queued as that client's. */
  asClient<T>(client: string, fn: () => T): T {
    return this.#client.run(client, fn);
  }

  /** Jobs running and waiting now. */
  get load(): { running: number; queued: number } {
    return { running: this.#running, queued: this.#queued };
  }

  /** Runs `work` when a slot is free and its client's turn has come; refuses at once when the queue is full. */
  run<T>(work: () => Promise<T>): Promise<T> {
    const client = this.#client.getStore() ?? NO_CLIENT;
    const mine = this.#waiting.get(client);
    if (this.#running < this.#limits.concurrency && this.#queued === 0) return this.#execute(work);
    if ((mine?.length ?? 0) >= this.#limits.maxQueuedPerClient) {
      clientRefusals.inc();
      return Promise.reject(
        new AppError("rate_limited", "too many password checks from this address at once; try again shortly", {
          headers: { "Retry-After": RETRY_AFTER_SECONDS },
        }),
      );
    }
    if (this.#queued >= this.#limits.maxQueued) {
      fullRefusals.inc();
      return Promise.reject(
        new AppError("service_unavailable", "too many password checks in progress", { headers: { "Retry-After": RETRY_AFTER_SECONDS } }),
      );
    }
    return new Promise<T>((resolve, reject) => {
      const job: Job = { start: () => this.#execute(work).then(resolve, reject) };
      if (mine) mine.push(job);
      else this.#waiting.set(client, [job]);
      this.#queued += 1;
    });
  }

  async #execute<T>(work: () => Promise<T>): Promise<T> {
    this.#running += 1;
    try {
      return await work();
    } finally {
      this.#running -= 1;
      this.#next();
    }
  }

  /** Starts the first waiting job of the client whose turn it is; that client goes to the back. */
  #next(): void {
    const first = this.#waiting.entries().next();
    if (first.done) return;
    const [client, jobs] = first.value;
    const job = jobs.shift();
    this.#waiting.delete(client);
    if (jobs.length > 0) this.#waiting.set(client, jobs);
    this.#queued -= 1;
    job?.start();
  }
}

/** The queue of this process, shared by every identity app in it. */
export const passwordQueue = new PasswordQueue();
