#!/usr/bin/env node
/**
 * Micro-benchmark of one Ed25519 JWT verification, run in its own process on the server core:
 * node:crypto (OpenSSL, synchronous), WebCrypto `subtle.verify` (what jose calls), and jose
 * `jwtVerify` with the key already imported (the verifier's cold path minus key lookup).
 * Input: env BENCH_TOKEN and BENCH_JWK_X; output: one JSON line of CPU microseconds per operation.
 */
import { createPublicKey, verify, webcrypto } from "node:crypto";
import { importJWK, jwtVerify } from "jose";
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

/**
 * CPU time (user + system, every thread: WebCrypto runs on the libuv pool) per operation, median of
 * the batches. CPU time rather than wall time, so that preemption by other work on a loaded
 * machine does not count.
 */
async function measure(op: () => unknown): Promise<number> {
  for (let i = 0; i < Math.min(500, iterations); i += 1) await op();
  const perOp: number[] = [];
  for (let b = 0; b < batches; b += 1) {
    const before = process.cpuUsage();
    for (let i = 0; i < iterations; i += 1) await op();
    const used = process.cpuUsage(before);
    perOp.push((used.user + used.system) / iterations);
  }
  return median(perOp);
}

const check = verify(null, data, keyObject, sig);
if (!check) throw new Error("the sample token does not verify with the given key");
const opensslSync = await measure(() => verify(null, data, keyObject, sig));
const webcryptoAsync = await measure(() => webcrypto.subtle.verify({ name: "Ed25519" }, cryptoKey, sig, data));
const joseJwtVerify = await measure(() => jwtVerify(token, joseKey, { algorithms: ["EdDSA"] }));
process.stdout.write(`${JSON.stringify({ opensslSync, webcryptoAsync, joseJwtVerify, iterations, batches })}\n`);
