import type { PrismaClient } from "@app/db";
import type { Logger } from "pino";
import type { Sessions } from "../sessions.js";
import type { SocialProviderConfig } from "./config.js";
import { LinkedAccounts } from "./linked-accounts.js";
import { type SocialSettings, SocialSignIn } from "./social-sign-in.js";

/** The provider sign-in services routes/social-routes.ts serves. */
export interface Social {
  signIn: SocialSignIn;
  linked: LinkedAccounts;
}

export function createSocial(deps: {
  providers: SocialProviderConfig[];
  prisma: PrismaClient;
  sessions: Sessions;
  settings: SocialSettings;
  logger: Logger;
}): Social {
  return { signIn: new SocialSignIn(deps), linked: new LinkedAccounts({ prisma: deps.prisma }) };
}
