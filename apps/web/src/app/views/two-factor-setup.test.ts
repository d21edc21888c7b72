import { describe, expect, it } from "vitest";
import { passkeyLabel } from "./passkeys.js";
import { backupCodesFile, totpSecret } from "./two-factor-setup.js";

describe("the authenticator app's setup", () => {
  it("shows the secret of the otpauth URI as text, and nothing for a URI without one", () => {
    expect(totpSecret("otpauth://totp/Taskboard:ada%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Taskboard&digits=6&period=30")).toBe(
      "JBSWY3DPEHPK3PXP",
    );
    expect(totpSecret("otpauth://totp/x?issuer=y")).toBe("");
    expect(totpSecret("not a uri")).toBe("");
  });

  it("saves the backup codes one a line, naming the account", () => {
    const file = backupCodesFile("ada@example.com", ["abcde-12345", "fghij-67890"]);
    expect(file.split("\n")).toEqual([
      "Backup codes for ada@example.com",
      "Each code signs you in once when you have no code from your authenticator app.",
      "",
      "abcde-12345",
      "fghij-67890",
      "",
    ]);
  });
});

describe("a passkey's label", () => {
  it("is its name, or its kind of device when unnamed", () => {
    expect(passkeyLabel({ name: "Work laptop", deviceType: "singleDevice" })).toBe("Work laptop");
    expect(passkeyLabel({ name: null, deviceType: "multiDevice" })).toBe("Synced passkey");
    expect(passkeyLabel({ name: "", deviceType: "singleDevice" })).toBe("Passkey on one device");
  });
});
