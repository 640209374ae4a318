-- The documents version of an organization for the search cache (src/areas/documents/search-cache.ts): waits until
-- no document write of the organization is in flight (writers hold the sync lock in shared mode to commit,
-- migration 0047; this takes it exclusively, like a sync pull's barrier), then reads the highest change number of
-- its documents. plpgsql, so the read takes its snapshot after the wait and sees every write it waited for. Every
-- change numbered up to the result is committed, and any later change gets a higher number. Runs as the caller:
-- the row policy of sync_changes applies.
CREATE FUNCTION app_documents_version(org uuid) RETURNS bigint
  LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(404040, hashtext(org::text));
  RETURN COALESCE((SELECT change_seq FROM sync_changes WHERE org_id = org AND resource_type = 'documents' ORDER BY change_seq DESC LIMIT 1), 0);
END $$;
