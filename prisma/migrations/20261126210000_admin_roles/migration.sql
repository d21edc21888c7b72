-- Identity's one write to the API's roles: better-auth's admin/set-role (apps/identity/src/admin/)
-- grants or takes the `admin` role. Identity may not touch user_role; this function, owned by
-- auth_api and run with its rights (SECURITY DEFINER), does that one thing, and identity may only
-- execute it. It answers what it did: 'granted', 'revoked', 'unchanged', 'unknown_user', or
-- 'last_admin' (taking the role from the only admin is refused, as the API's own role change).
CREATE FUNCTION set_user_admin(p_user_id text, p_admin boolean) RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER
-- pg_temp last, so a caller's temporary table cannot stand in for user_role.
SET search_path = public, pg_temp
AS $$
BEGIN
  -- Serialised with the API's role changes (apps/api/src/admin/roles.ts, ROLE_CHANGE_LOCK
  -- 0x726f6c65), so two admins taking each other's role cannot both pass the last-admin check.
  PERFORM pg_advisory_xact_lock(1919904869);
  IF NOT EXISTS (SELECT 1 FROM public.user_directory WHERE id = p_user_id) THEN
    RETURN 'unknown_user';
  END IF;
  IF p_admin THEN
    INSERT INTO public.user_role (user_id, role) VALUES (p_user_id, 'admin') ON CONFLICT DO NOTHING;
    RETURN CASE WHEN FOUND THEN 'granted' ELSE 'unchanged' END;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM public.user_role WHERE user_id = p_user_id AND role = 'admin') THEN
    RETURN 'unchanged';
  END IF;
  IF NOT EXISTS (SELECT 1 FROM public.user_role WHERE role = 'admin' AND user_id <> p_user_id) THEN
    RETURN 'last_admin';
  END IF;
  DELETE FROM public.user_role WHERE user_id = p_user_id AND role = 'admin';
  RETURN 'revoked';
END
$$;

ALTER FUNCTION set_user_admin(text, boolean) OWNER TO auth_api;
REVOKE ALL ON FUNCTION set_user_admin(text, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION set_user_admin(text, boolean) TO auth_identity;
