// The parts of panva's oidc-provider (which ships no types) that identity uses: the authorization
// server (apps/identity/src/oauth-provider/) and the fake upstream IdP of the tests (test/oidc-kit.ts).
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  /** What the adapter stores for one model instance (a token, a grant, a client's metadata...). */
  export interface AdapterPayload {
    [key: string]: unknown;
    jti?: string;
    kind?: string;
    iat?: number;
    exp?: number;
    consumed?: number;
    grantId?: string;
    userCode?: string;
    uid?: string;
    accountId?: string;
    clientId?: string;
    client_id?: string;
    client_secret?: string;
  }

  /** The storage contract of every model (oidc-provider's example/my_adapter.js). */
  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  /** An account as `findAccount` resolves it. */
  export interface Account {
    accountId: string;
    claims(use: string, scope: string): Record<string, unknown> | Promise<Record<string, unknown>>;
  }

  interface Prompt {
    name: string;
    reasons: string[];
    details: {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
      [key: string]: unknown;
    };
  }

  class Interaction {
    static find(uid: string): Promise<Interaction | undefined>;
    readonly uid: string;
    iat?: number;
    exp: number;
    returnTo: string;
    prompt: Prompt;
    params: Record<string, unknown>;
    session?: { accountId: string; uid?: string };
    grantId?: string;
    lastSubmission?: Record<string, unknown>;
    result?: Record<string, unknown>;
    save(ttl: number): Promise<string>;
  }

  class Grant {
    constructor(init: { accountId: string; clientId: string });
    static find(id: string): Promise<Grant | undefined>;
    readonly jti: string;
    accountId: string;
    clientId: string;
    addOIDCScope(scope: string): void;
    rejectOIDCScope(scope: string): void;
    getOIDCScope(): string;
    addOIDCClaims(claims: string[]): void;
    addResourceScope(resource: string, scope: string): void;
    rejectResourceScope(resource: string, scope: string): void;
    getResourceScope(resource: string): string;
    save(): Promise<string>;
  }

  class Session {
    static get(ctx: KoaContext): Promise<Session>;
    accountId?: string;
    destroy(): Promise<void>;
  }

  class Client {
    static find(id: string): Promise<Client | undefined>;
    readonly clientId: string;
    readonly clientName?: string;
    readonly clientUri?: string;
    readonly logoUri?: string;
    readonly policyUri?: string;
    readonly tosUri?: string;
    grantTypeAllowed(type: string): boolean;
  }

  /** The request state oidc-provider hands to its configuration helpers. */
  export interface OIDCContext {
    readonly session: { accountId?: string; grantIdFor(clientId: string): string | undefined };
    readonly client?: Client;
    readonly params: Record<string, unknown>;
    readonly result?: { consent?: { grantId?: string } };
    readonly route: string;
  }

  /** A Koa context of the provider's app. */
  export interface KoaContext {
    req: IncomingMessage;
    res: ServerResponse;
    readonly oidc: OIDCContext;
    path: string;
    type: string;
    status: number;
    body: unknown;
  }

  type Middleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void>;

  export class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    readonly issuer: string;
    proxy: boolean;
    readonly app: { createContext(req: IncomingMessage, res: ServerResponse): KoaContext };
    Grant: typeof Grant;
    Interaction: typeof Interaction;
    Session: typeof Session;
    Client: typeof Client;
    use(middleware: Middleware): void;
    on(event: string, listener: (...args: unknown[]) => void): this;
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
  }
  export default Provider;

  class OIDCProviderError extends Error {
    constructor(status: number, message: string);
    error_description?: string;
  }

  export const errors: {
    OIDCProviderError: typeof OIDCProviderError;
    InvalidRequest: new (description?: string, status?: number) => OIDCProviderError;
    InvalidTarget: new (description?: string) => OIDCProviderError;
  };

  class Check {
    constructor(reason: string, description: string, error: string, check: (ctx: KoaContext) => boolean | Promise<boolean>);
    static readonly REQUEST_PROMPT: true;
    static readonly NO_NEED_TO_PROMPT: false;
  }

  interface PolicyPrompt {
    readonly name: string;
    readonly checks: { add(check: Check): void };
  }

  export const interactionPolicy: {
    Check: typeof Check;
    base(): PolicyPrompt[] & { get(name: string): PolicyPrompt | undefined };
  };
}
