-- Organizations and operators (docs/organizations.md, docs/admin.md): organizations with members,
-- invitations and teams, their deletion outbox, the active organization and impersonation on the
-- session, bans on the user, and an organization on projects. Identity owns the organization
-- tables; the API owns project. Each service sees the other's facts only through a view:
-- organization_membership (identity's, read by the API) and role_directory (the API's, read by
-- identity).
ALTER TABLE "user" ADD COLUMN     "ban_expires" TIMESTAMPTZ(3),
ADD COLUMN     "ban_reason" TEXT,
ADD COLUMN     "banned" BOOLEAN NOT NULL DEFAULT false;

ALTER TABLE "session" ADD COLUMN     "active_organization_id" TEXT,
ADD COLUMN     "active_team_id" TEXT,
ADD COLUMN     "impersonated_by" TEXT;

ALTER TABLE "project" ADD COLUMN     "organization_id" TEXT;

CREATE TABLE "organization" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "logo" TEXT,
    "metadata" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "organization_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "member" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "member_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "invitation" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "team_id" TEXT,
    "status" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "inviter_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "invitation_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "team" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "team_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "team_member" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "team_member_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "organization_deletion" (
    "organization_id" TEXT NOT NULL,
    "requested_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "api_done_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "organization_deletion_pkey" PRIMARY KEY ("organization_id")
);

CREATE UNIQUE INDEX "organization_slug_key" ON "organization"("slug");

CREATE INDEX "member_user_id_idx" ON "member"("user_id");

CREATE UNIQUE INDEX "member_organization_id_user_id_key" ON "member"("organization_id", "user_id");

CREATE INDEX "invitation_organization_id_status_idx" ON "invitation"("organization_id", "status");

CREATE INDEX "invitation_email_status_idx" ON "invitation"("email", "status");

CREATE INDEX "team_organization_id_idx" ON "team"("organization_id");

CREATE INDEX "team_member_user_id_idx" ON "team_member"("user_id");

CREATE UNIQUE INDEX "team_member_team_id_user_id_key" ON "team_member"("team_id", "user_id");

CREATE INDEX "organization_deletion_api_done_at_idx" ON "organization_deletion"("api_done_at");

CREATE INDEX "project_organization_id_id_idx" ON "project"("organization_id", "id");

ALTER TABLE "member" ADD CONSTRAINT "member_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "member" ADD CONSTRAINT "member_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "invitation" ADD CONSTRAINT "invitation_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "invitation" ADD CONSTRAINT "invitation_inviter_id_fkey" FOREIGN KEY ("inviter_id") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "team" ADD CONSTRAINT "team_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "team_member" ADD CONSTRAINT "team_member_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "team"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "team_member" ADD CONSTRAINT "team_member_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;


ALTER TABLE "organization" OWNER TO auth_identity;
ALTER TABLE "member" OWNER TO auth_identity;
ALTER TABLE "invitation" OWNER TO auth_identity;
ALTER TABLE "team" OWNER TO auth_identity;
ALTER TABLE "team_member" OWNER TO auth_identity;
ALTER TABLE "organization_deletion" OWNER TO auth_identity;
-- The API reads the deletion outbox and marks its part done, as with user_deletion.
GRANT SELECT ON "organization_deletion" TO auth_api;
GRANT UPDATE ("api_done_at") ON "organization_deletion" TO auth_api;

-- The API's window on memberships: one indexed read per request on an organization's resource.
-- An organization whose deletion is pending has no members, so its rows answer 404 at once.
CREATE VIEW "organization_membership" AS
  SELECT m."organization_id", m."user_id", m."role" FROM "member" m
  WHERE NOT EXISTS (SELECT 1 FROM "organization_deletion" d WHERE d."organization_id" = m."organization_id");
ALTER VIEW "organization_membership" OWNER TO auth_identity;
GRANT SELECT ON "organization_membership" TO auth_api;

-- Identity's window on the API's roles: who is an admin, read per admin request.
CREATE VIEW "role_directory" AS SELECT "user_id", "role" FROM "user_role";
ALTER VIEW "role_directory" OWNER TO auth_api;
GRANT SELECT ON "role_directory" TO auth_identity;
