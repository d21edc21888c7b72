-- Second factors and passwordless sign-in (docs/accounts.md "Second factors"): the TOTP factor
-- with its hashed backup codes, trusted devices, passkeys, and one table of short-lived
-- single-use challenges (pending second-factor sign-ins, WebAuthn challenges, emailed codes
-- and magic links). Secrets are stored only as HMAC-SHA256 hashes or sealed with
-- packages/secret-box. All identity's alone (docs/database-roles.md).
ALTER TABLE "user" ADD COLUMN     "two_factor_enabled" BOOLEAN NOT NULL DEFAULT false;

CREATE TABLE "two_factor" (
    "user_id" TEXT NOT NULL,
    "secret" TEXT NOT NULL,
    "backup_codes" TEXT[],
    "last_step" BIGINT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "two_factor_pkey" PRIMARY KEY ("user_id")
);

CREATE TABLE "trusted_device" (
    "id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "secret_hash" BYTEA NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "trusted_device_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "passkey" (
    "id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "name" TEXT,
    "credential_id" TEXT NOT NULL,
    "public_key" BYTEA NOT NULL,
    "counter" BIGINT NOT NULL DEFAULT 0,
    "device_type" TEXT NOT NULL,
    "backed_up" BOOLEAN NOT NULL DEFAULT false,
    "transports" TEXT,
    "aaguid" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "passkey_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "auth_challenge" (
    "id" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "secret_hash" BYTEA NOT NULL,
    "user_id" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "data" JSONB,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "auth_challenge_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "trusted_device_user_id_idx" ON "trusted_device"("user_id");

CREATE INDEX "trusted_device_expires_at_idx" ON "trusted_device"("expires_at");

CREATE UNIQUE INDEX "passkey_credential_id_key" ON "passkey"("credential_id");

CREATE INDEX "passkey_user_id_idx" ON "passkey"("user_id");

CREATE INDEX "auth_challenge_purpose_subject_idx" ON "auth_challenge"("purpose", "subject");

CREATE INDEX "auth_challenge_secret_hash_idx" ON "auth_challenge"("secret_hash");

CREATE INDEX "auth_challenge_expires_at_idx" ON "auth_challenge"("expires_at");

ALTER TABLE "two_factor" ADD CONSTRAINT "two_factor_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "trusted_device" ADD CONSTRAINT "trusted_device_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "passkey" ADD CONSTRAINT "passkey_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "auth_challenge" ADD CONSTRAINT "auth_challenge_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;


ALTER TABLE "two_factor" OWNER TO auth_identity;
ALTER TABLE "trusted_device" OWNER TO auth_identity;
ALTER TABLE "passkey" OWNER TO auth_identity;
ALTER TABLE "auth_challenge" OWNER TO auth_identity;
