/**
 * Test-only helpers (excluded from the build): an issuer that mints real EdDSA tokens, a raw
 * signer for hostile shapes, a counting JWKS server on 127.0.0.1, and a frozen clock.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from "jose";
import { expect } from "vitest";
import { AuthVerifyError, type AuthVerifyErrorCode } from "./errors.js";

/** Frozen test epoch (ms): 2030-01-01T00:00:00Z. */
export const T0 = Date.UTC(2030, 0, 1);
/** Frozen test epoch in seconds. */
export const T0_SEC = T0 / 1000;

/** A clock that only moves when told. */
export interface TestClock {
  now: () => number;
  advance(ms: number): void;
  set(ms: number): void;
}

/** A clock frozen at `start` (default {@link T0}). */
export function frozenClock(start = T0): TestClock {
  let t = start;
  return {
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
    set: (ms) => {
      t = ms;
    },
  };
}

/** An Ed25519 signing key with its kid and public JWK. */
export interface TestKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

/** Generates an Ed25519 key pair; the public JWK carries kid, alg EdDSA and use sig. */
export async function makeKey(kid: string): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: "EdDSA", use: "sig" };
  return { kid, privateKey, publicJwk };
}

/** Default claims of a valid token at {@link T0}: sub, iss, aud, iat, exp (+30 days). */
export function claims(overrides: JWTPayload = {}): JWTPayload {
  return {
    sub: "user-123",
    iss: "https://auth.test",
    aud: "api.test",
    iat: T0_SEC,
    exp: T0_SEC + 30 * 86_400,
    ...overrides,
  };
}

/** A real EdDSA JWT signed by `key` (header: alg EdDSA, typ JWT, kid; plus `header` extras). */
export async function mint(key: TestKey, payload: JWTPayload = claims(), header: Record<string, unknown> = {}) {
  return new SignJWT(payload).setProtectedHeader({ alg: "EdDSA", typ: "JWT", kid: key.kid, ...header }).sign(key.privateKey);
}

/** base64url of bytes or of a string's UTF-8. */
export function b64url(input: Uint8Array | string): string {
  return Buffer.from(typeof input === "string" ? Buffer.from(input, "utf8") : input).toString("base64url");
}

/**
 * Signs arbitrary header and payload bytes with Ed25519, bypassing every check of jose's signers,
 * so hostile but correctly signed tokens can be built. Objects are JSON-encoded.
 */
export async function signRaw(
  key: TestKey,
  header: Record<string, unknown> | Uint8Array,
  payload: Record<string, unknown> | Uint8Array | string,
): Promise<string> {
  const h = b64url(header instanceof Uint8Array ? header : JSON.stringify(header));
  const p = b64url(payload instanceof Uint8Array ? payload : typeof payload === "string" ? payload : JSON.stringify(payload));
  const input = new TextEncoder().encode(`${h}.${p}`);
  const signature = await crypto.subtle.sign("Ed25519", key.privateKey, input);
  return `${h}.${p}.${b64url(new Uint8Array(signature))}`;
}

/** How the test JWKS server answers. */
export type JwksMode = "ok" | "error500" | "reset" | "hang" | "not-json" | "no-keys-array";

/** A JWKS endpoint on 127.0.0.1 that counts requests. */
export interface JwksServer {
  url: string;
  /** Requests received. */
  hits(): number;
  /** Replaces the published keys. */
  setKeys(keys: unknown[]): void;
  /** Changes how the server answers. */
  setMode(mode: JwksMode): void;
  close(): Promise<void>;
}

/** Starts a JWKS server publishing `keys` at /api/auth/jwks on an ephemeral port. */
export async function startJwksServer(keys: unknown[]): Promise<JwksServer> {
  let published = keys;
  let mode: JwksMode = "ok";
  let hits = 0;
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    hits += 1;
    if (req.url !== "/api/auth/jwks") {
      res.writeHead(404).end();
      return;
    }
    switch (mode) {
      case "ok":
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: published }));
        return;
      case "error500":
        res.writeHead(500).end("down");
        return;
      case "reset":
        req.socket.destroy();
        return;
      case "hang":
        return;
      case "not-json":
        res.writeHead(200, { "content-type": "application/json" }).end("<html>");
        return;
      case "no-keys-array":
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: "nope" }));
        return;
    }
  };
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/auth/jwks`,
    hits: () => hits,
    setKeys: (next) => {
      published = next;
    },
    setMode: (next) => {
      mode = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Awaits `promise`, requires it to reject with an AuthVerifyError of `code`, and requires the
 * message to contain no part of `token` (when given). Returns the error.
 */
export async function expectCode(promise: Promise<unknown>, code: AuthVerifyErrorCode, token?: string) {
  const error = await promise.then(
    () => {
      throw new Error(`expected rejection with ${code}, got a result`);
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AuthVerifyError);
  const authError = error as AuthVerifyError;
  expect(authError.code).toBe(code);
  expect(authError.status).toBe(code === "jwks_unavailable" ? 503 : 401);
  if (token !== undefined) {
    for (const part of token.split(".")) if (part.length > 8) expect(authError.message).not.toContain(part);
  }
  return authError;
}
