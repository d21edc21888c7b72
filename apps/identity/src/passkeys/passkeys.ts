import { randomUUID } from "node:crypto";
import {
  PASSKEY_MAX_PER_USER,
  type PasskeyAuthenticationOptionsResponse,
  type PasskeyRegisterOptionsQuery,
  type PasskeyRegistrationOptionsResponse,
  type PasskeyView,
  type VerifyPasskeyAuthenticationBody,
  type VerifyPasskeyRegistrationBody,
} from "@app/contracts";
import { isUniqueViolation, type PrismaClient, type User } from "@app/db";
import { AppError } from "@app/http-kit";
import {
  type AuthenticationResponseJSON,
  type AuthenticatorTransportFuture,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import type { Request, Response } from "express";
import type { Logger } from "pino";
import { NO_REQUEST, type RequestFacts, recordEvent, requestFacts } from "../security-events/record.js";
import type { MailOutbox } from "../services/mail-outbox.js";
import type { ActiveSession } from "../services/sessions.js";
import { refusedFor } from "../sign-in/failures.js";
import type { SignInFinisher } from "../sign-in/finish.js";
import type { PasskeyChallenges } from "./challenges.js";

/** The relying party passkeys are bound to (config-factors.ts). */
export interface RelyingParty {
  id: string;
  name: string;
  origins: string[];
}

/** What {@link PasskeyCeremonies} is built from (passkeys/routes.ts). */
export interface PasskeyDeps {
  prisma: PrismaClient;
  logger: Logger;
  rp: RelyingParty;
  challenges: PasskeyChallenges;
  mailOutbox: MailOutbox;
  signIns: SignInFinisher;
  /** Where the passkey-added mail points: the account's security page. */
  securityPageUrl: string;
}

/** A passkey row (@app/db exports no model type of it). */
type Passkey = Awaited<ReturnType<PrismaClient["passkey"]["findUniqueOrThrow"]>>;

const transportsOf = (stored: string | null) =>
  stored ? (stored.split(",").filter(Boolean) as AuthenticatorTransportFuture[]) : undefined;

/** better-auth's passkey row, as its client reads it (the public key in standard base64). */
export function passkeyView(passkey: Passkey): PasskeyView {
  return {
    id: passkey.id,
    name: passkey.name,
    publicKey: Buffer.from(passkey.publicKey).toString("base64"),
    userId: passkey.userId,
    credentialID: passkey.credentialId,
    counter: Number(passkey.counter),
    deviceType: passkey.deviceType,
    backedUp: passkey.backedUp,
    transports: passkey.transports,
    createdAt: passkey.createdAt.toISOString(),
    aaguid: passkey.aaguid,
  };
}

const tooMany = () =>
  new AppError("conflict", `an account holds at most ${PASSKEY_MAX_PER_USER} passkeys: delete one before adding another`);
const notFound = () => new AppError("not_found", "passkey not found");

/**
 * The WebAuthn ceremonies and the user's passkeys. Every check of a ceremony (challenge, origin,
 * RP id hash, user presence and verification, signature, counter) is @simplewebauthn/server's;
 * this class keeps the challenge single use, the counter monotonic under concurrent sign-ins, and
 * the registration rules (one account per credential, a cap per user, a mail on each addition).
 */
export class PasskeyCeremonies {
  readonly #deps: PasskeyDeps;

  constructor(deps: PasskeyDeps) {
    this.#deps = deps;
  }

  /** Registration options for the signed-in `user`; the challenge goes to the store and its cookie. */
  async registrationOptions(res: Response, user: User, query: PasskeyRegisterOptionsQuery): Promise<PasskeyRegistrationOptionsResponse> {
    const { prisma, rp, challenges } = this.#deps;
    const existing = await prisma.passkey.findMany({ where: { userId: user.id }, select: { credentialId: true, transports: true } });
    if (existing.length >= PASSKEY_MAX_PER_USER) throw tooMany();
    const options = await generateRegistrationOptions({
      rpName: rp.name,
      rpID: rp.id,
      // The user handle is the account id (opaque, no personal data), so an authenticator keeps one
      // credential per account and the same user on the same device replaces rather than piles up.
      userID: new TextEncoder().encode(user.id),
      userName: user.email,
      userDisplayName: user.name,
      attestationType: "none",
      excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: transportsOf(p.transports) })),
      authenticatorSelection: {
        residentKey: "preferred",
        userVerification: "required",
        ...(query.authenticatorAttachment ? { authenticatorAttachment: query.authenticatorAttachment } : {}),
      },
    });
    await challenges.issue(res, "passkey-registration", user.id, { challenge: options.challenge });
    return options;
  }

  /** Verifies a registration of the signed-in user and stores the passkey; mails the user. */
  async verifyRegistration(req: Request, res: Response, active: ActiveSession, body: VerifyPasskeyRegistrationBody): Promise<PasskeyView> {
    const { prisma, rp, challenges, mailOutbox, logger } = this.#deps;
    const { user } = active;
    const expected = await challenges.consume(req, res, "passkey-registration");
    if (expected.userId !== user.id)
      throw new AppError("challenge_expired", "the passkey challenge belongs to another session: start again");
    let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
    try {
      verification = await verifyRegistrationResponse({
        response: body.response as RegistrationResponseJSON,
        expectedChallenge: expected.challenge,
        expectedOrigin: rp.origins,
        expectedRPID: rp.id,
        requireUserVerification: true,
      });
    } catch (error) {
      logger.info({ reason: (error as Error).message }, "passkey registration refused");
      throw new AppError("passkey_verification_failed", "the passkey registration did not verify");
    }
    if (!verification.verified) throw new AppError("passkey_verification_failed", "the passkey registration did not verify");
    const { credential, credentialDeviceType, credentialBackedUp, aaguid } = verification.registrationInfo;
    const transports = body.response.response.transports?.join(",") ?? "";
    try {
      const { passkey, mail } = await prisma.$transaction(async (tx) => {
        // One registration of a user at a time, so the cap holds under concurrent requests.
        await tx.$executeRaw`SELECT 1 FROM "user" WHERE "id" = ${user.id} FOR UPDATE`;
        if ((await tx.passkey.count({ where: { userId: user.id } })) >= PASSKEY_MAX_PER_USER) throw tooMany();
        const passkey = await tx.passkey.create({
          data: {
            id: randomUUID(),
            userId: user.id,
            name: body.name ?? null,
            credentialId: credential.id,
            publicKey: new Uint8Array(credential.publicKey),
            counter: BigInt(credential.counter),
            deviceType: credentialDeviceType,
            backedUp: credentialBackedUp,
            transports,
            aaguid,
          },
        });
        const mail = await mailOutbox.enqueueMail({ kind: "passkey-added", to: user.email, body: this.#deps.securityPageUrl }, tx);
        await recordEvent(tx, { type: "passkey_added", userId: user.id, detail: { passkeyId: passkey.id } }, requestFacts(req));
        return { passkey, mail };
      });
      if (mail === "queued") mailOutbox.wake();
      return passkeyView(passkey);
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError("conflict", "this passkey is already registered");
      throw error;
    }
  }

  /**
   * Sign-in options; for a signed-in user (`userId`) they list the user's passkeys, as
   * better-auth's do, otherwise the authenticator offers its discoverable credentials.
   */
  async authenticationOptions(res: Response, userId: string | undefined): Promise<PasskeyAuthenticationOptionsResponse> {
    const { prisma, rp, challenges } = this.#deps;
    const mine = userId ? await prisma.passkey.findMany({ where: { userId }, select: { credentialId: true, transports: true } }) : [];
    const options = await generateAuthenticationOptions({
      rpID: rp.id,
      userVerification: "required",
      ...(mine.length ? { allowCredentials: mine.map((p) => ({ id: p.credentialId, transports: transportsOf(p.transports) })) } : {}),
    });
    await challenges.issue(res, "passkey-authentication", userId, { challenge: options.challenge });
    return options;
  }

  /**
   * Verifies a passkey sign-in and opens the session: a passkey with user verification is
   * possession and a PIN or biometric, so it counts as both factors (sign-in/finish.ts). A refused
   * passkey is recorded as `sign_in_failed` (naming its account when the credential is known).
   */
  async verifyAuthentication(req: Request, res: Response, body: VerifyPasskeyAuthenticationBody) {
    const { signIns } = this.#deps;
    const user = await signIns.attempt(req, { method: "passkey" }, () => this.#authenticate(req, res, body));
    const finished = await signIns.finish(req, res, user, { method: "passkey", twoFactors: true });
    if (finished.kind !== "session") throw new AppError("internal_error", "a passkey sign-in did not open a session");
    return finished;
  }

  /** The user whose passkey signed `body`, its counter moved on; the refusals of {@link verifyAuthentication}. */
  async #authenticate(req: Request, res: Response, body: VerifyPasskeyAuthenticationBody): Promise<User> {
    const { prisma, rp, challenges, logger } = this.#deps;
    const expected = await challenges.consume(req, res, "passkey-authentication");
    const passkey = await prisma.passkey.findUnique({ where: { credentialId: body.response.id }, include: { user: true } });
    if (!passkey) throw new AppError("passkey_verification_failed", "the passkey sign-in did not verify");
    const refused = () => refusedFor(new AppError("passkey_verification_failed", "the passkey sign-in did not verify"), passkey.userId);
    let verification: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
    try {
      verification = await verifyAuthenticationResponse({
        response: body.response as AuthenticationResponseJSON,
        expectedChallenge: expected.challenge,
        expectedOrigin: rp.origins,
        expectedRPID: rp.id,
        credential: {
          id: passkey.credentialId,
          publicKey: new Uint8Array(passkey.publicKey),
          counter: Number(passkey.counter),
          transports: transportsOf(passkey.transports),
        },
        requireUserVerification: true,
      });
    } catch (error) {
      logger.info({ reason: (error as Error).message, passkeyId: passkey.id }, "passkey sign-in refused");
      throw refused();
    }
    if (!verification.verified) throw refused();
    const { newCounter, credentialBackedUp } = verification.authenticationInfo;
    // Only the counter this verification read moves on: of two sign-ins racing with one counter
    // value, the second finds it changed and is refused.
    const { count } = await prisma.passkey.updateMany({
      where: { id: passkey.id, counter: passkey.counter },
      data: { counter: BigInt(newCounter), backedUp: credentialBackedUp },
    });
    if (count !== 1) throw refused();
    return passkey.user;
  }

  /** The user's passkeys, oldest first. */
  async list(userId: string): Promise<PasskeyView[]> {
    const rows = await this.#deps.prisma.passkey.findMany({ where: { userId }, orderBy: { createdAt: "asc" } });
    return rows.map(passkeyView);
  }

  /** Renames one of the user's passkeys; another user's answers 404 like a missing one. */
  async rename(userId: string, id: string, name: string): Promise<PasskeyView> {
    const { prisma } = this.#deps;
    const { count } = await prisma.passkey.updateMany({ where: { id, userId }, data: { name } });
    const passkey = count === 1 ? await prisma.passkey.findFirst({ where: { id, userId } }) : null;
    if (!passkey) throw notFound();
    return passkeyView(passkey);
  }

  /** Deletes one of the user's passkeys, with its `passkey_removed` event; another user's answers 404 like a missing one. */
  async remove(userId: string, id: string, facts: RequestFacts = NO_REQUEST): Promise<void> {
    await this.#deps.prisma.$transaction(async (tx) => {
      const { count } = await tx.passkey.deleteMany({ where: { id, userId } });
      if (count !== 1) throw notFound();
      await recordEvent(tx, { type: "passkey_removed", userId, detail: { passkeyId: id } }, facts);
    });
  }
}
