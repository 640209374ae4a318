-- A user who leaves an organization (removed by an admin, leaving, or deprovisioned by SCIM) leaves its projects
-- too: their project memberships went on being listed, with their name and e-mail, after the organization had
-- dropped them (and adding them back to a project was refused, as they were no longer members). A trigger, so every
-- way a membership ends is covered and the accounts area need not know about projects.
CREATE FUNCTION app_delete_project_memberships() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM project_members WHERE org_id = OLD.org_id AND user_id = OLD.user_id;
  RETURN NULL;
END $$;
CREATE TRIGGER memberships_project_members_gone AFTER DELETE ON memberships
  FOR EACH ROW EXECUTE FUNCTION app_delete_project_memberships();
