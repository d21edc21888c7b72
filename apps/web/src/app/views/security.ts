import "../factors.css";
import type { View } from "../context.js";
import { h } from "../dom.js";
import { passkeysSection } from "./passkeys.js";
import { twoFactorSection } from "./two-factor-setup.js";

/** Account → Security: two-factor authentication and passkeys. */
export const securityView: View = (ctx, root) => {
  const twoFactor = twoFactorSection(ctx);
  const passkeys = passkeysSection(ctx);
  root.append(
    h("h1", {}, "Security"),
    h("p", {}, h("a", { href: "#/account", id: "security-back" }, "Back to the account")),
    twoFactor.element,
    passkeys.element,
  );
  return () => {
    twoFactor.stop();
    passkeys.stop();
  };
};
