import { createHmac } from "node:crypto";
import { type CryptoKey, generateKeyPair, type JWK } from "jose";

/** The real signing key of the service under test (its public half is in the served key set). */
export interface CorpusKey {
  kid: string;
  /** Ed25519 private key (WebCrypto). */
  privateKey: CryptoKey;
  /** Public JWK; `x` is used for the algorithm-confusion tokens. */
  publicJwk: JWK;
}

/** Options of {@link buildHostileTokens}. */
export interface HostileCorpusOptions {
  key: CorpusKey;
  /** The `iss` the verifier expects. */
  issuer: string;
  /** The `aud` the verifier expects. */
  audience: string;
  /** Clock of the verifier, in seconds (default: now). */
  nowSec?: number;
  /** `sub` of otherwise valid tokens. */
  subject?: string;
  /** The `typ` the verifier expects (default `JWT`, the contract's; `at+jwt` for an OAuth resource server). */
  typ?: string;
  /** Claims every otherwise valid token carries besides the registered ones (an access token's `client_id`, `scope`). */
  claims?: Record<string, unknown>;
}

/** One bad token and why it is bad. */
export interface HostileToken {
  name: string;
  token: string;
}

/** One bad way to present credentials over HTTP: raw header pairs, repeated names allowed. */
export interface HostileHeaderCase {
  name: string;
  headers: Array<[string, string]>;
}

const te = new TextEncoder();
const b64 = (input: Uint8Array | string) => Buffer.from(typeof input === "string" ? te.encode(input) : input).toString("base64url");
const json = (value: unknown) => b64(JSON.stringify(value));

async function ed25519(key: CryptoKey, input: string): Promise<string> {
  return b64(new Uint8Array(await crypto.subtle.sign("Ed25519", key, te.encode(input))));
}

/** Signs arbitrary header and payload bytes with Ed25519, bypassing every check of a JWT library. */
async function signRaw(key: CryptoKey, header: unknown, payload: unknown): Promise<string> {
  const h = header instanceof Uint8Array ? b64(header) : json(header);
  const p = payload instanceof Uint8Array ? b64(payload) : typeof payload === "string" ? b64(payload) : json(payload);
  return `${h}.${p}.${await ed25519(key, `${h}.${p}`)}`;
}

function hs256(secret: Uint8Array | string, header: unknown, payload: unknown): string {
  const input = `${json(header)}.${json(payload)}`;
  return `${input}.${createHmac("sha256", secret).update(input).digest("base64url")}`;
}

/** Replaces one character in the middle of a segment by another base64url character. */
function flip(segment: string): string {
  const i = Math.floor(segment.length / 2);
  const c = segment[i] === "A" ? "B" : "A";
  return `${segment.slice(0, i)}${c}${segment.slice(i + 1)}`;
}

/**
 * Builds the shared hostile-token corpus (48 tokens): every one must be refused with a
 * 401 by the verification primitive and by every entry that uses it (HTTP business route,
 * streaming middleware, WebSocket upgrade). Tokens are correctly signed by the real key wherever
 * that makes the attack stronger, so only the check under test can refuse them.
 */
export async function buildHostileTokens(options: HostileCorpusOptions): Promise<HostileToken[]> {
  const { key, issuer, audience } = options;
  const now = options.nowSec ?? Math.floor(Date.now() / 1000);
  const claims = (over: Record<string, unknown> = {}) => {
    const base: Record<string, unknown> = {
      ...options.claims,
      sub: options.subject ?? "hostile-user",
      iss: issuer,
      aud: audience,
      iat: now,
      exp: now + 3600,
    };
    for (const [name, value] of Object.entries(over)) {
      if (value === undefined) delete base[name];
      else base[name] = value;
    }
    return base;
  };
  const typ = options.typ ?? "JWT";
  // The other kind of token the same key signs: an access token for a contract verifier, and back.
  const otherTyp = typ.toLowerCase() === "jwt" ? "at+jwt" : "JWT";
  const head = (over: Record<string, unknown> = {}) => ({ alg: "EdDSA", typ, kid: key.kid, ...over });
  const foreign = (await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true })).privateKey;
  const real = (h: unknown, p: unknown) => signRaw(key.privateKey, h, p);
  const valid = await real(head(), claims());
  const [vh = "", vp = "", vs = ""] = valid.split(".");
  const x = Buffer.from(String(key.publicJwk.x ?? ""), "base64url");

  const tokens: Array<[string, string | Promise<string>]> = [
    ["alg none, empty signature", `${json(head({ alg: "none" }))}.${json(claims())}.`],
    ["alg none, with a real signature", real(head({ alg: "none" }), claims())],
    ["alg missing", real({ typ, kid: key.kid }, claims())],
    ["alg RS256 claimed, Ed25519 signature", real(head({ alg: "RS256" }), claims())],
    ["HS256 signed with the public key bytes (algorithm confusion)", hs256(x, head({ alg: "HS256" }), claims())],
    ["HS256 signed with the public JWK text", hs256(JSON.stringify(key.publicJwk), head({ alg: "HS256" }), claims())],
    ["unknown kid", real(head({ kid: "no-such-key" }), claims())],
    ["kid missing", real({ alg: "EdDSA", typ }, claims())],
    ["non-string kid (number)", real(head({ kid: 1 }), claims())],
    ["non-string kid (object)", real(head({ kid: { kid: key.kid } }), claims())],
    ["empty kid", real(head({ kid: "" }), claims())],
    ["embedded jwk header (attacker key)", signRaw(foreign, head({ jwk: key.publicJwk }), claims())],
    ["jku header", real(head({ jku: "http://127.0.0.1:1/jwks.json" }), claims())],
    ["x5u header", real(head({ x5u: "http://127.0.0.1:1/cert.pem" }), claims())],
    ["x5c header", real(head({ x5c: ["MIIB"] }), claims())],
    ["unknown crit extension", real(head({ crit: ["exp2"], exp2: 1 }), claims())],
    ["b64 false", real(head({ b64: false, crit: ["b64"] }), claims())],
    ["tampered payload (sub changed)", `${vh}.${json(claims({ sub: "admin" }))}.${vs}`],
    ["tampered signature", `${vh}.${vp}.${flip(vs)}`],
    ["truncated signature", `${vh}.${vp}.${vs.slice(0, -2)}`],
    ["empty signature", `${vh}.${vp}.`],
    ["2 segments", `${vh}.${vp}`],
    ["4 segments", `${valid}.${vs}`],
    ["non-base64url characters", `${vh}.${vp.slice(0, -1)}+.${vs}`],
    ["base64 padding", `${vh}=.${vp}.${vs}`],
    ["payload a JSON array", real(head(), "[1,2]")],
    ["payload a JSON string", real(head(), '"hostile-user"')],
    ["payload not JSON", real(head(), "not json")],
    ["payload invalid UTF-8", real(head(), new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]))],
    ["header invalid UTF-8", real(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), claims())],
    ["header not JSON", real(te.encode("not json"), claims())],
    ["exp missing", real(head(), claims({ exp: undefined }))],
    ["sub missing", real(head(), claims({ sub: undefined }))],
    ["iat missing", real(head(), claims({ iat: undefined }))],
    ["sub empty", real(head(), claims({ sub: "" }))],
    ["sub not a string", real(head(), claims({ sub: 42 }))],
    ["exp a string", real(head(), claims({ exp: String(now + 3600) }))],
    ["expired", real(head(), claims({ iat: now - 7200, exp: now - 3600 }))],
    ["nbf in the future", real(head(), claims({ nbf: now + 3600 }))],
    ["wrong iss", real(head(), claims({ iss: "https://evil.example" }))],
    ["wrong aud", real(head(), claims({ aud: "https://evil.example" }))],
    ["foreign key reusing the real kid", signRaw(foreign, head(), claims())],
    ["100 KB token", real(head(), claims({ pad: "x".repeat(75_000) }))],
    ["random junk", "not-a-token"],
    [`typ ${otherTyp} (the other kind of token, same key and claims)`, real(head({ typ: otherTyp }), claims())],
    // A leaked key must not mint a token that never expires (JSON 1e999 is Infinity), one issued
    // in the future, or one that lives longer than identity's 30 days.
    ["exp 1e999 (never expires)", real(head(), JSON.stringify(claims()).replace(/"exp":[0-9]+/, '"exp":1e999'))],
    ["iat in the future", real(head(), claims({ iat: now + 3600, exp: now + 7200 }))],
    ["lifetime over 30 days", real(head(), claims({ iat: now, exp: now + 31 * 86_400 }))],
  ];
  return Promise.all(tokens.map(async ([name, token]) => ({ name, token: await token })));
}

/**
 * Bad ways to present an otherwise valid token over HTTP: doubled scheme, other schemes, stray
 * whitespace, and two Authorization headers. Each must answer 401. (The scheme's letter case is
 * not one: `bearer` and `BEARER` are `Bearer`, RFC 9110 §11.1.)
 */
export function hostileAuthorizationCases(validToken: string): HostileHeaderCase[] {
  const one = (name: string, value: string): HostileHeaderCase => ({ name, headers: [["authorization", value]] });
  return [
    one("lowercase scheme, two spaces", `bearer  ${validToken}`),
    one("uppercase scheme, tab", `BEARER\t${validToken}`),
    one("doubled Bearer", `Bearer Bearer ${validToken}`),
    one("two spaces", `Bearer  ${validToken}`),
    one("tab instead of space", `Bearer\t${validToken}`),
    one("Basic scheme", `Basic ${validToken}`),
    one("no scheme", validToken),
    one("scheme only", "Bearer"),
    one("two tokens in one header", `Bearer ${validToken}, Bearer ${validToken}`),
    {
      name: "two Authorization headers (both valid)",
      headers: [
        ["authorization", `Bearer ${validToken}`],
        ["authorization", `Bearer ${validToken}`],
      ],
    },
    {
      name: "two Authorization headers (valid, junk)",
      headers: [
        ["authorization", `Bearer ${validToken}`],
        ["authorization", "Bearer junk"],
      ],
    },
  ];
}
