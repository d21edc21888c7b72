import type { AnyRoute } from "@app/http-kit";
import type { FeatureDeps } from "../features.js";
import { MailChallenges } from "./challenges.js";
import { EmailOtps } from "./email-otp.js";
import { emailOtpRoutes } from "./email-otp-routes.js";
import { MagicLinks } from "./magic-link.js";
import { magicLinkRoutes } from "./magic-link-routes.js";
import { MailboxProof } from "./mailbox-proof.js";

/** The routes of sign-in by mail (magic links and emailed codes), on better-auth 1.7's wire. */
export function passwordlessRoutes(deps: FeatureDeps): AnyRoute[] {
  const { prisma, service, config } = deps;
  const challenges = new MailChallenges({ prisma, authSecret: config.authSecret, now: deps.now });
  const proof = new MailboxProof({ tokens: service.mailTokens });
  const outbox = service.mailOutbox;
  const links = new MagicLinks({ prisma, challenges, proof, outbox, baseUrl: config.baseUrl });
  const otps = new EmailOtps({ prisma, challenges, proof, outbox });
  return [...magicLinkRoutes(deps, links), ...emailOtpRoutes(deps, otps)];
}
