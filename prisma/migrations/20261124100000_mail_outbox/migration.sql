-- The outbox of account mails (docs/accounts.md "Mail"): a mail route writes its row in the
-- transaction that makes the mail's token, and identity's worker sends it later
-- (apps/identity/src/services/mail-outbox.ts). The row holds the recipient and the link only
-- sealed (AES-256-GCM under a key derived from AUTH_SECRET), and loses them once the mail is sent
-- or given up. recipient_key is an HMAC of the normalised address: the per-address mail budget
-- counts rows by it without the address in clear.
-- CreateTable
CREATE TABLE "mail_outbox" (
    "id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "recipient_key" TEXT NOT NULL,
    "payload" TEXT,
    "state" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "sent_at" TIMESTAMPTZ(3),

    CONSTRAINT "mail_outbox_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "mail_outbox_state_check" CHECK ("state" IN ('pending', 'sending', 'sent', 'dead', 'dropped', 'skipped')),
    -- Only a mail still to send carries the sealed recipient and link.
    CONSTRAINT "mail_outbox_payload_check" CHECK (("payload" IS NOT NULL) = ("state" IN ('pending', 'sending')))
);

-- CreateIndex
CREATE INDEX "mail_outbox_state_next_attempt_at_idx" ON "mail_outbox"("state", "next_attempt_at");

-- CreateIndex
CREATE INDEX "mail_outbox_recipient_key_created_at_idx" ON "mail_outbox"("recipient_key", "created_at");

-- CreateIndex
CREATE INDEX "mail_outbox_created_at_idx" ON "mail_outbox"("created_at");

-- Identity's alone (docs/database-roles.md): the API has no grant on it.
ALTER TABLE "mail_outbox" OWNER TO auth_identity;
