-- A sync pull's barrier reads the highest change number of the type it pulls (sync_changes_seq answers that), not of
-- the whole organization, so the org-wide (org_id, change_seq) index had no reader left: every synced write (tasks,
-- projects, documents, entities, relationships, comments) paid for one more index entry for nothing.
DROP INDEX IF EXISTS sync_changes_org_seq;
