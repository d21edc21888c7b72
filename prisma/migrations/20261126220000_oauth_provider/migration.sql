-- The product as an OAuth 2.1 / OpenID provider (docs/oauth-provider.md): oidc-provider's state,
-- one row per model instance, identity's alone (docs/database-roles.md). A token's row is keyed
-- by an HMAC of its value (apps/identity/src/oauth-provider/), so no usable token is stored.
CREATE TABLE "oauth_payload" (
    "kind" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "grant_id" TEXT,
    "user_code" TEXT,
    "uid" TEXT,
    "account_id" TEXT,
    "client_id" TEXT,
    "expires_at" TIMESTAMPTZ(3),
    "consumed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "oauth_payload_pkey" PRIMARY KEY ("kind","id")
);

CREATE INDEX "oauth_payload_grant_id_idx" ON "oauth_payload"("grant_id");

CREATE INDEX "oauth_payload_uid_idx" ON "oauth_payload"("uid");

CREATE INDEX "oauth_payload_user_code_idx" ON "oauth_payload"("user_code");

CREATE INDEX "oauth_payload_kind_account_id_idx" ON "oauth_payload"("kind", "account_id");

CREATE INDEX "oauth_payload_expires_at_idx" ON "oauth_payload"("expires_at");


ALTER TABLE "oauth_payload" OWNER TO auth_identity;
