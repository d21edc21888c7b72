import { Counter } from "prom-client";

/**
 * Sign-in outcomes by method (password, provider, passkey, magic_link, email_otp, ...) and outcome
 * (success, failure, two_factor): the security event recorder counts every sign-in event it
 * writes here, so the series and the event log never disagree.
 */
export const signIns = new Counter({
  name: "identity_sign_ins_total",
  help: "Sign-in attempts by method and outcome",
  labelNames: ["method", "outcome"] as const,
});
