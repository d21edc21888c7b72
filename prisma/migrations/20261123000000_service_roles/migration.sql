-- Per-service database roles (docs/database-roles.md): PostgreSQL, not convention, keeps the API
-- out of identity's tables. auth_identity owns user, account, session and jwks; auth_api owns
-- the business tables and user_role, and reads users only through the user_directory view.
-- Roles are cluster-wide while migrations run per database (tests create many databases on one
-- server, concurrently), so creation tolerates a role that exists or is being created.
DO $$
DECLARE
  role_name text;
BEGIN
  FOREACH role_name IN ARRAY ARRAY['auth_identity', 'auth_api'] LOOP
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = role_name) THEN
      BEGIN
        -- LOGIN without a password: usable at once under trust auth; elsewhere an operator sets
        -- one (ALTER ROLE ... PASSWORD) or grants the role to a login role of their own.
        EXECUTE format('CREATE ROLE %I LOGIN', role_name);
      EXCEPTION WHEN duplicate_object OR unique_violation THEN
        NULL;
      END;
    END IF;
    -- ALTER ... OWNER TO needs a superuser or a member of the new owner (a managed server's admin
    -- with CREATEROLE is neither until it grants itself the role).
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
       AND NOT pg_has_role(current_user, role_name, 'MEMBER') THEN
      EXECUTE format('GRANT %I TO %I', role_name, current_user);
    END IF;
  END LOOP;
END $$;

-- Neither service creates objects at run time: only the migrating admin does.
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO auth_identity, auth_api;

-- Identity's tables. Owning a table grants every privilege on it and nothing to anyone else.
ALTER TABLE "user" OWNER TO auth_identity;
ALTER TABLE "account" OWNER TO auth_identity;
ALTER TABLE "session" OWNER TO auth_identity;
ALTER TABLE "jwks" OWNER TO auth_identity;

-- The API's tables (owned sequences, such as task_event's, follow their table). Foreign keys to
-- "user" need no privilege of auth_api: PostgreSQL checks a referenced row as the owner of the
-- referenced table, and runs ON DELETE CASCADE as the owner of the referencing table.
ALTER TABLE "user_role" OWNER TO auth_api;
ALTER TABLE "project" OWNER TO auth_api;
ALTER TABLE "agent" OWNER TO auth_api;
ALTER TABLE "chat" OWNER TO auth_api;
ALTER TABLE "chat_message" OWNER TO auth_api;
ALTER TABLE "task" OWNER TO auth_api;
ALTER TABLE "task_message" OWNER TO auth_api;
ALTER TABLE "task_event" OWNER TO auth_api;
ALTER TABLE "upload" OWNER TO auth_api;
ALTER TABLE "mcp_server" OWNER TO auth_api;
ALTER TABLE "mcp_oauth_state" OWNER TO auth_api;

-- The one window the API has on users, for admin listings and grants by email: a read-only
-- projection owned by identity's role (a view reads its table with its owner's rights).
CREATE VIEW "user_directory" AS SELECT "id", "email", "name", "created_at" FROM "user";
ALTER VIEW "user_directory" OWNER TO auth_identity;
GRANT SELECT ON "user_directory" TO auth_api;
