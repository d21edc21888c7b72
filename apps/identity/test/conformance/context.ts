import type { MailCatcher } from "@app/mailer/catcher";
import type { IdentityApp } from "../../src/app.js";
import type { Browser, TestProvider } from "../oidc-kit.js";

/** One browser's JSON client of identity (route-conformance.test.ts builds it). */
export interface ConformanceClient {
  browser: Browser;
  get(path: string): Promise<Response>;
  post(path: string, body?: unknown): Promise<Response>;
}

/**
 * What route-conformance.test.ts hands each feature's driver: a driver answers every route of
 * its feature with real requests, so the table's coverage reaches every route.
 */
export interface ConformanceContext {
  baseUrl: string;
  built: IdentityApp;
  catcher: MailCatcher;
  provider: TestProvider;
  client(browser?: Browser): ConformanceClient;
  /** Asserts `status` and returns the JSON body. */
  expectJson(res: Response, status?: number): Promise<Record<string, unknown>>;
  /** A new address. */
  fresh(label: string): string;
  /** The first mail to `to` whose subject contains `subject`. */
  mailTo(to: string, subject: string): ReturnType<MailCatcher["waitFor"]>;
  password: string;
}

/** A feature's conformance driver. */
export type ConformanceDriver = (ctx: ConformanceContext) => Promise<void>;
