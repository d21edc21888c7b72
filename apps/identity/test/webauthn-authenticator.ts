import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto";
import { cose, isoBase64URL, isoCBOR } from "@simplewebauthn/server/helpers";

// A software WebAuthn authenticator for tests: real ES256 (P-256) and Ed25519 key pairs from
// node:crypto, real "none" attestation objects and real assertions (the signature covers
// authenticatorData || SHA-256(clientDataJSON)), CBOR through @simplewebauthn/server's helpers.
// Overrides make the responses a broken or hostile client would send.

/** authenticatorData flag bits (WebAuthn §6.1). */
export const FLAGS = { UP: 0x01, UV: 0x04, BE: 0x08, BS: 0x10, AT: 0x40 } as const;

export type KeyAlgorithm = "ES256" | "Ed25519";

/** COSE algorithm ids of the two key types. */
const COSE_ALG: Record<KeyAlgorithm, number> = { ES256: cose.COSEALG.ES256, Ed25519: cose.COSEALG.EdDSA };

/** One credential the authenticator holds. */
export interface SoftCredential {
  id: Uint8Array;
  /** base64url of {@link id}, as the server stores it. */
  idB64: string;
  alg: KeyAlgorithm;
  privateKey: KeyObject;
  publicKey: KeyObject;
  rpId: string;
  userHandle: Uint8Array;
  counter: number;
}

/** What a ceremony may change: the client's origin, the RP id hashed, flags, counter, a reused credential. */
export interface Overrides {
  origin?: string;
  rpId?: string;
  flags?: number;
  /** The signature counter this assertion reports (default: the stored one plus one). */
  counter?: number;
  /** Registration: attest this credential again, ignoring excludeCredentials. */
  reuse?: SoftCredential;
}

/** The parts of creation options the authenticator reads (JSON form, as the server sends them). */
export interface CreationOptions {
  challenge: string;
  rp: { id?: string | undefined; name: string };
  user: { id: string };
  pubKeyCredParams: { alg: number }[];
  excludeCredentials?: { id: string }[] | undefined;
}

/** The parts of request options the authenticator reads (JSON form). */
export interface RequestOptions {
  challenge: string;
  rpId?: string | undefined;
  allowCredentials?: { id: string }[] | undefined;
}

/** A registration response in bytes (the browser shim wraps these in ArrayBuffers). */
export interface Attestation {
  credential: SoftCredential;
  clientDataJSON: Uint8Array;
  attestationObject: Uint8Array;
  authenticatorData: Uint8Array;
}

/** An authentication response in bytes. */
export type Assertion = Omit<Attestation, "attestationObject"> & { signature: Uint8Array };

const sha256 = (data: Uint8Array | string) => new Uint8Array(createHash("sha256").update(data).digest());
const concat = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));
const uint32 = (n: number) => {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(n >>> 0);
  return new Uint8Array(out);
};
const b64 = (data: Uint8Array) => isoBase64URL.fromBuffer(data as Uint8Array<ArrayBuffer>);

/** The credential public key as a COSE_Key (EC2 for P-256, OKP for Ed25519). */
function coseKey(credential: SoftCredential): Uint8Array {
  const jwk = credential.publicKey.export({ format: "jwk" });
  const coord = (value: string | undefined) => isoBase64URL.toBuffer(value ?? "");
  const key =
    credential.alg === "ES256"
      ? new Map<number, number | Uint8Array>([
          [cose.COSEKEYS.kty, cose.COSEKTY.EC2],
          [cose.COSEKEYS.alg, cose.COSEALG.ES256],
          [cose.COSEKEYS.crv, cose.COSECRV.P256],
          [cose.COSEKEYS.x, coord(jwk.x)],
          [cose.COSEKEYS.y, coord(jwk.y)],
        ])
      : new Map<number, number | Uint8Array>([
          [cose.COSEKEYS.kty, cose.COSEKTY.OKP],
          [cose.COSEKEYS.alg, cose.COSEALG.EdDSA],
          [cose.COSEKEYS.crv, cose.COSECRV.ED25519],
          [cose.COSEKEYS.x, coord(jwk.x)],
        ]);
  return isoCBOR.encode(key);
}

/** A platform authenticator holding credentials of one key type, used from `origin`. */
export class SoftwareAuthenticator {
  readonly credentials: SoftCredential[] = [];
  readonly aaguid = new Uint8Array(16);

  constructor(
    readonly alg: KeyAlgorithm,
    readonly origin: string,
  ) {}

  #clientData(type: string, challenge: string, overrides: Overrides): Uint8Array {
    return new TextEncoder().encode(JSON.stringify({ type, challenge, origin: overrides.origin ?? this.origin, crossOrigin: false }));
  }

  /** navigator.credentials.create: a new credential (or `overrides.reuse`) attested with "none". */
  makeCredential(options: CreationOptions, overrides: Overrides = {}): Attestation {
    const rpId = options.rp.id ?? new URL(this.origin).hostname;
    if (!options.pubKeyCredParams.some((p) => p.alg === COSE_ALG[this.alg]))
      throw new DOMException("no supported algorithm", "NotSupportedError");
    const excluded = new Set((options.excludeCredentials ?? []).map((c) => c.id));
    if (!overrides.reuse && this.credentials.some((c) => c.rpId === rpId && excluded.has(c.idB64)))
      throw new DOMException("a credential of this authenticator is already registered", "InvalidStateError");
    const credential = overrides.reuse ?? this.#newCredential(rpId, isoBase64URL.toBuffer(options.user.id));
    const flags = overrides.flags ?? FLAGS.UP | FLAGS.UV | FLAGS.AT;
    const idLength = new Uint8Array([credential.id.length >> 8, credential.id.length & 0xff]);
    const authenticatorData = concat(
      sha256(overrides.rpId ?? rpId),
      new Uint8Array([flags]),
      uint32(credential.counter),
      this.aaguid,
      idLength,
      credential.id,
      coseKey(credential),
    );
    const attestationObject = isoCBOR.encode(
      new Map<string, string | Uint8Array | Map<string, string>>([
        ["fmt", "none"],
        ["attStmt", new Map<string, string>()],
        ["authData", authenticatorData],
      ]),
    );
    return {
      credential,
      clientDataJSON: this.#clientData("webauthn.create", options.challenge, overrides),
      attestationObject,
      authenticatorData,
    };
  }

  #newCredential(rpId: string, userHandle: Uint8Array): SoftCredential {
    const pair = this.alg === "ES256" ? generateKeyPairSync("ec", { namedCurve: "P-256" }) : generateKeyPairSync("ed25519");
    const id = new Uint8Array(randomBytes(32));
    const credential: SoftCredential = { id, idB64: b64(id), alg: this.alg, ...pair, rpId, userHandle, counter: 0 };
    this.credentials.push(credential);
    return credential;
  }

  /** navigator.credentials.get: an assertion by an allowed credential (or the newest discoverable one). */
  getAssertion(options: RequestOptions, overrides: Overrides = {}): Assertion {
    const rpId = options.rpId ?? new URL(this.origin).hostname;
    const allowed = new Set((options.allowCredentials ?? []).map((c) => c.id));
    const credential = this.credentials.findLast((c) => c.rpId === rpId && (allowed.size === 0 || allowed.has(c.idB64)));
    if (!credential) throw new DOMException("no credential for this relying party", "NotAllowedError");
    credential.counter = overrides.counter ?? credential.counter + 1;
    const flags = overrides.flags ?? FLAGS.UP | FLAGS.UV;
    const authenticatorData = concat(sha256(overrides.rpId ?? rpId), new Uint8Array([flags]), uint32(credential.counter));
    const clientDataJSON = this.#clientData("webauthn.get", options.challenge, overrides);
    const signed = concat(authenticatorData, sha256(clientDataJSON));
    // ECDSA signatures are DER-encoded in WebAuthn; Ed25519 signs the message itself.
    const signature =
      credential.alg === "ES256"
        ? sign("sha256", signed, { key: credential.privateKey, dsaEncoding: "der" })
        : sign(null, signed, credential.privateKey);
    return { credential, clientDataJSON, authenticatorData, signature: new Uint8Array(signature) };
  }

  /** `RegistrationResponseJSON`, as @simplewebauthn/browser's startRegistration returns it. */
  registrationJSON(options: CreationOptions, overrides: Overrides = {}) {
    const made = this.makeCredential(options, overrides);
    return {
      id: made.credential.idB64,
      rawId: made.credential.idB64,
      type: "public-key" as const,
      response: {
        clientDataJSON: b64(made.clientDataJSON),
        attestationObject: b64(made.attestationObject),
        authenticatorData: b64(made.authenticatorData),
        transports: ["internal"],
        publicKeyAlgorithm: COSE_ALG[this.alg],
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform" as const,
    };
  }

  /** `AuthenticationResponseJSON`, as @simplewebauthn/browser's startAuthentication returns it. */
  authenticationJSON(options: RequestOptions, overrides: Overrides = {}) {
    const asserted = this.getAssertion(options, overrides);
    return {
      id: asserted.credential.idB64,
      rawId: asserted.credential.idB64,
      type: "public-key" as const,
      response: {
        clientDataJSON: b64(asserted.clientDataJSON),
        authenticatorData: b64(asserted.authenticatorData),
        signature: b64(asserted.signature),
        userHandle: b64(asserted.credential.userHandle),
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform" as const,
    };
  }
}

const buffer = (data: Uint8Array) => data.slice().buffer;
type Bytes = ArrayBuffer | ArrayBufferView;
const fromBuffer = (data: Bytes) =>
  b64(data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength));

/** The creation options navigator.credentials.create receives (binary fields as buffers). */
interface BrowserCreationOptions {
  challenge: Bytes;
  rp: { id?: string; name: string };
  user: { id: Bytes };
  pubKeyCredParams: { alg: number }[];
  excludeCredentials?: { id: Bytes }[];
}

/** The request options navigator.credentials.get receives. */
interface BrowserRequestOptions {
  challenge: Bytes;
  rpId?: string;
  allowCredentials?: { id: Bytes }[];
}

/**
 * Puts `authenticator` behind the browser's WebAuthn API in Node (globalThis.window,
 * navigator.credentials, PublicKeyCredential), so @simplewebauthn/browser, and through it
 * better-auth's passkeyClient, runs unchanged. Returns what restores the globals.
 */
export function installBrowserWebAuthn(authenticator: SoftwareAuthenticator): () => void {
  const g = globalThis as Record<string, unknown>;
  const saved = { window: g.window, navigator: Object.getOwnPropertyDescriptor(globalThis, "navigator"), pkc: g.PublicKeyCredential };
  class PublicKeyCredential {}
  const credential = (id: Uint8Array, response: Record<string, unknown>) => ({
    id: b64(id),
    rawId: buffer(id),
    type: "public-key",
    response,
    authenticatorAttachment: "platform",
    getClientExtensionResults: () => ({}),
  });
  const credentials = {
    async create({ publicKey }: { publicKey: BrowserCreationOptions }) {
      const made = authenticator.makeCredential({
        challenge: fromBuffer(publicKey.challenge),
        rp: publicKey.rp,
        user: { id: fromBuffer(publicKey.user.id) },
        pubKeyCredParams: publicKey.pubKeyCredParams,
        excludeCredentials: publicKey.excludeCredentials?.map((c) => ({ id: fromBuffer(c.id) })),
      });
      return credential(made.credential.id, {
        clientDataJSON: buffer(made.clientDataJSON),
        attestationObject: buffer(made.attestationObject),
        getTransports: () => ["internal"],
        getPublicKeyAlgorithm: () => COSE_ALG[authenticator.alg],
        getPublicKey: () => null,
        getAuthenticatorData: () => buffer(made.authenticatorData),
      });
    },
    async get({ publicKey }: { publicKey: BrowserRequestOptions }) {
      const asserted = authenticator.getAssertion({
        challenge: fromBuffer(publicKey.challenge),
        rpId: publicKey.rpId,
        allowCredentials: publicKey.allowCredentials?.map((c) => ({ id: fromBuffer(c.id) })),
      });
      return credential(asserted.credential.id, {
        clientDataJSON: buffer(asserted.clientDataJSON),
        authenticatorData: buffer(asserted.authenticatorData),
        signature: buffer(asserted.signature),
        userHandle: buffer(asserted.credential.userHandle),
      });
    },
  };
  g.window = { location: new URL(authenticator.origin) };
  Object.defineProperty(globalThis, "navigator", { value: { credentials, userAgent: "software-authenticator" }, configurable: true });
  g.PublicKeyCredential = PublicKeyCredential;
  return () => {
    if (saved.window === undefined) delete g.window;
    else g.window = saved.window;
    if (saved.navigator) Object.defineProperty(globalThis, "navigator", saved.navigator);
    else delete g.navigator;
    if (saved.pkc === undefined) delete g.PublicKeyCredential;
    else g.PublicKeyCredential = saved.pkc;
  };
}
