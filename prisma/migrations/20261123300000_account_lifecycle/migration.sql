-- The account lifecycle (docs/accounts.md): mailed single-use tokens, a profile image, and the
-- outbox of account deletions the API consumes. Both tables are identity's (docs/database-roles.md).
-- AlterTable
ALTER TABLE "user" ADD COLUMN     "image" TEXT;

-- CreateTable
CREATE TABLE "verification" (
    "id" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "token_hash" BYTEA NOT NULL,
    "email" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "verification_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_deletion" (
    "user_id" TEXT NOT NULL,
    "requested_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "api_done_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "user_deletion_pkey" PRIMARY KEY ("user_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "verification_token_hash_key" ON "verification"("token_hash");

-- CreateIndex
CREATE INDEX "verification_user_id_purpose_idx" ON "verification"("user_id", "purpose");

-- CreateIndex
CREATE INDEX "verification_expires_at_idx" ON "verification"("expires_at");

-- CreateIndex
CREATE INDEX "user_deletion_api_done_at_idx" ON "user_deletion"("api_done_at");

-- AddForeignKey
ALTER TABLE "verification" ADD CONSTRAINT "verification_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- Owners and grants: identity owns both tables; the API reads the deletion outbox and marks its
-- part done (api_done_at), nothing else.
ALTER TABLE "verification" OWNER TO auth_identity;
ALTER TABLE "user_deletion" OWNER TO auth_identity;
GRANT SELECT ON "user_deletion" TO auth_api;
GRANT UPDATE ("api_done_at") ON "user_deletion" TO auth_api;

-- A user whose deletion is pending is gone for the API's listings and grants by email already.
CREATE OR REPLACE VIEW "user_directory" AS
  SELECT u."id", u."email", u."name", u."created_at" FROM "user" u
  WHERE NOT EXISTS (SELECT 1 FROM "user_deletion" d WHERE d."user_id" = u."id");
