import { runMicro } from "../infra.js";
import type { Ctx } from "./context.js";

export interface MicroResult {
  opensslSync: number;
  webcryptoAsync: number;
  joseJwtVerify: number;
  /** The product's whole cold path (`verifyToken`, cache off, key set loaded). */
  productVerify: number;
}

export async function microScenario(ctx: Ctx): Promise<MicroResult> {
  ctx.log("micro: Ed25519 verification cost on the server core");
  const r = await runMicro(ctx.cores.server, ctx.hotToken, ctx.jwkX, ctx.settings.quick ? 1000 : 3000);
  const out = {
    opensslSync: r.opensslSync as number,
    webcryptoAsync: r.webcryptoAsync as number,
    joseJwtVerify: r.joseJwtVerify as number,
    productVerify: r.productVerify as number,
  };
  ctx.log(
    `micro: OpenSSL ${out.opensslSync.toFixed(1)} µs, WebCrypto ${out.webcryptoAsync.toFixed(1)} µs, jose jwtVerify ${out.joseJwtVerify.toFixed(1)} µs, auth-verify cold path ${out.productVerify.toFixed(1)} µs`,
  );
  return out;
}

// ---- memory -------------------------------------------------------------------------------------
