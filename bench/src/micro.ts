#!/usr/bin/env node
/**
 * Micro-benchmark of one Ed25519 JWT verification, run in its own process on the server core:
 * node:crypto (OpenSSL, synchronous), WebCrypto `subtle.verify` (what jose calls), bare jose
 * `jwtVerify` on the same imported key with the checks the product asks of it (EdDSA, `typ`, required
 * claims, `iss`, `aud`, tolerance, `maxTokenAge`) and with algorithms only, and the product's
 * `@app/auth-verify` verifyToken with its cache off and its key set loaded (the whole cold path:
 * shape, key lookup by kid, jose `jwtVerify`, lifetime and `sub`). `productOverJose` is the
 * wrapper's own cost: the product over bare jose with the same checks.
 * Input: env BENCH_TOKEN and BENCH_JWK_X; output: one JSON line of CPU microseconds per operation.
 */
import { createPublicKey, verify, webcrypto } from "node:crypto";
import {
  ALLOWED_ALGORITHMS,
  createVerifier,
  DEFAULT_CLOCK_TOLERANCE_SEC,
  DEFAULT_MAX_TOKEN_LIFETIME_SEC,
  REQUIRED_CLAIMS,
  RemoteKeySet,
  TOKEN_TYPE,
} from "@app/auth-verify";
import { decodeJwt, decodeProtectedHeader, importJWK, jwtVerify } from "jose";
import { median } from "./stats.js";

const token = process.env.BENCH_TOKEN ?? "";
const x = process.env.BENCH_JWK_X ?? "";
const iterations = Number(process.env.BENCH_ITERATIONS ?? 2000);
const batches = Number(process.env.BENCH_BATCHES ?? 5);

const [header = "", payload = "", signature = ""] = token.split(".");
const data = Buffer.from(`${header}.${payload}`);
const sig = Buffer.from(signature, "base64url");
const keyObject = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" });
const cryptoKey = await webcrypto.subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x }, { name: "Ed25519" }, false, ["verify"]);
const joseKey = await importJWK({ kty: "OKP", crv: "Ed25519", x }, "EdDSA");
const { kid } = decodeProtectedHeader(token);
const { iss, aud } = decodeJwt(token);
const jwks = JSON.stringify({ keys: [{ kty: "OKP", crv: "Ed25519", x, kid }] });
const keySet = new RemoteKeySet({ url: "http://127.0.0.1:9/jwks", fetch: async () => new Response(jwks) });
const product = createVerifier({
  keySet,
  verifiedCache: false,
  ...(iss === undefined ? {} : { issuer: iss }),
  ...(aud === undefined ? {} : { audience: aud }),
});
await product.verifyToken(token);
/** What the product asks of jose for this token (packages/auth-verify/src/jwt-check.ts). */
const sameChecks = {
  algorithms: [...ALLOWED_ALGORITHMS],
  typ: TOKEN_TYPE,
  requiredClaims: [...REQUIRED_CLAIMS],
  clockTolerance: DEFAULT_CLOCK_TOLERANCE_SEC,
  maxTokenAge: DEFAULT_MAX_TOKEN_LIFETIME_SEC,
  ...(iss === undefined ? {} : { issuer: iss }),
  ...(aud === undefined ? {} : { audience: aud }),
};

/** CPU time (user + system, every thread: WebCrypto runs on the libuv pool) per operation of one batch. */
async function batch(op: () => unknown): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < iterations; i += 1) await op();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / iterations;
}

/**
 * Median CPU time per operation of each op over `batches` batches, the ops interleaved batch by
 * batch (so a change of machine load affects them alike). CPU time rather than wall time, so that
 * preemption by other work on a loaded machine does not count.
 */
async function measure(ops: Record<string, () => unknown>): Promise<Record<string, number>> {
  for (const op of Object.values(ops)) for (let i = 0; i < Math.min(500, iterations); i += 1) await op();
  const perOp = new Map<string, number[]>(Object.keys(ops).map((name) => [name, []]));
  for (let b = 0; b < batches; b += 1) {
    for (const [name, op] of Object.entries(ops)) perOp.get(name)?.push(await batch(op));
  }
  return Object.fromEntries([...perOp].map(([name, values]) => [name, median(values)]));
}

const check = verify(null, data, keyObject, sig);
if (!check) throw new Error("the sample token does not verify with the given key");
const results = await measure({
  opensslSync: () => verify(null, data, keyObject, sig),
  webcryptoAsync: () => webcrypto.subtle.verify({ name: "Ed25519" }, cryptoKey, sig, data),
  joseJwtVerify: () => jwtVerify(token, joseKey, sameChecks),
  joseAlgorithmsOnly: () => jwtVerify(token, joseKey, { algorithms: ["EdDSA"] }),
  productVerify: () => product.verifyToken(token),
});
const productOverJose = (results.productVerify as number) / (results.joseJwtVerify as number);
product.close();
keySet.close();
process.stdout.write(`${JSON.stringify({ ...results, productOverJose, iterations, batches })}\n`);
