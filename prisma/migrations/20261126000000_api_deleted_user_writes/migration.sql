-- No API row is written for a deleted account (docs/accounts.md, "Deleting an account"). A JWT
-- stays valid after its account is deleted, so the tombstone is checked where rows are written:
-- every INSERT into a business table runs this trigger inside the writer's own transaction. It
-- takes the user's advisory lock in shared mode, then looks for the user in identity's deletion
-- outbox `user_deletion` (the API may read it). The API's deletion pass
-- (apps/api/src/services/user-deletion.ts) takes the same lock exclusively before it reads the
-- user's rows and files: a write that started before the deletion commits before the pass reads
-- (so the pass deletes what it wrote), and one that starts after finds the tombstone and fails
-- with SQLSTATE AP401, which the API answers as 401 `unauthorized`. The check is a separate
-- statement after the lock, so it sees a deletion committed while the writer waited.
-- UPDATE and DELETE are not checked: they make no new row (an UPDATE that emits an event inserts
-- into task_event), and the deletion pass's own cascades (SET NULL) are UPDATEs.
CREATE FUNCTION "api_refuse_deleted_user"() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  uid text;
BEGIN
  IF TG_TABLE_NAME = 'chat_message' THEN
    SELECT "user_id" INTO uid FROM "chat" WHERE "id" = NEW."chat_id";
  ELSE
    uid := NEW."user_id";
  END IF;
  IF uid IS NULL THEN
    RETURN NEW;
  END IF;
  -- Class 0x75736572 ("user") keeps these keys apart from every other advisory lock.
  PERFORM pg_advisory_xact_lock_shared(1970496882, hashtext(uid));
  IF EXISTS (SELECT 1 FROM "user_deletion" WHERE "user_id" = uid) THEN
    RAISE EXCEPTION 'the account of this token no longer exists' USING ERRCODE = 'AP401';
  END IF;
  RETURN NEW;
END $$;
ALTER FUNCTION "api_refuse_deleted_user"() OWNER TO auth_api;

CREATE TRIGGER "project_refuse_deleted_user" BEFORE INSERT ON "project" FOR EACH ROW EXECUTE FUNCTION "api_refuse_deleted_user"();
CREATE TRIGGER "agent_refuse_deleted_user" BEFORE INSERT ON "agent" FOR EACH ROW EXECUTE FUNCTION "api_refuse_deleted_user"();
CREATE TRIGGER "chat_refuse_deleted_user" BEFORE INSERT ON "chat" FOR EACH ROW EXECUTE FUNCTION "api_refuse_deleted_user"();
CREATE TRIGGER "chat_message_refuse_deleted_user" BEFORE INSERT ON "chat_message" FOR EACH ROW EXECUTE FUNCTION "api_refuse_deleted_user"();
CREATE TRIGGER "task_refuse_deleted_user" BEFORE INSERT ON "task" FOR EACH ROW EXECUTE FUNCTION "api_refuse_deleted_user"();
CREATE TRIGGER "task_message_refuse_deleted_user" BEFORE INSERT ON "task_message" FOR EACH ROW EXECUTE FUNCTION "api_refuse_deleted_user"();
CREATE TRIGGER "task_event_refuse_deleted_user" BEFORE INSERT ON "task_event" FOR EACH ROW EXECUTE FUNCTION "api_refuse_deleted_user"();
CREATE TRIGGER "upload_refuse_deleted_user" BEFORE INSERT ON "upload" FOR EACH ROW EXECUTE FUNCTION "api_refuse_deleted_user"();
CREATE TRIGGER "mcp_server_refuse_deleted_user" BEFORE INSERT ON "mcp_server" FOR EACH ROW EXECUTE FUNCTION "api_refuse_deleted_user"();
CREATE TRIGGER "mcp_oauth_state_refuse_deleted_user" BEFORE INSERT ON "mcp_oauth_state" FOR EACH ROW EXECUTE FUNCTION "api_refuse_deleted_user"();
