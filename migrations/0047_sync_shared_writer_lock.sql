-- Synced writers no longer queue behind each other. Before: every writer took the organization's sync lock
-- exclusively and held it to commit, so one organization's task, project and document writes ran one at a
-- time, each waiting for the previous one's commit (WAL flush included). Now writers take the lock in shared
-- mode (they run side by side) and only the barrier of a sync pull takes it exclusively: it waits until no
-- writer of the organization is in flight, reads the highest change number and the clock, and lets go. What
-- the pull relies on still holds: every number at or below the barrier's `bound` is committed, and every write
-- that starts after the barrier draws a higher number and a later time. What no longer holds: numbers in commit
-- order between concurrent writers, and change_seq and changed_at in the same order; the pull's starting point
-- for `since` is therefore the lowest number among changes after `since` (src/areas/sync/sync.repo.ts
-- startAfter), found through the index below without visiting the table.
CREATE OR REPLACE FUNCTION app_sync_track() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
  PERFORM pg_advisory_xact_lock_shared(404040, hashtext(r.org_id::text));
  INSERT INTO sync_changes (org_id, resource_type, id, change_seq, changed_at, deleted)
  VALUES (r.org_id, TG_ARGV[0], r.id, nextval('sync_change_seq'), clock_timestamp(), TG_OP = 'DELETE')
  ON CONFLICT (org_id, resource_type, id) DO UPDATE
    SET change_seq = EXCLUDED.change_seq, changed_at = EXCLUDED.changed_at, deleted = EXCLUDED.deleted;
  RETURN NULL;
END $$;

DROP INDEX sync_changes_time;
CREATE INDEX sync_changes_time ON sync_changes (org_id, resource_type, changed_at) INCLUDE (change_seq);
