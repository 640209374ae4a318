-- Documents left unindexed by attempts that failed for good before 0065 (a search vector over 1 MB failed every
-- attempt, and the job ended `failed`, or was stuck behind the jobs_dedupe reset): queued again, once, so they become
-- searchable without an edit. A pending job of the document already does it (the dedupe index keeps one).
INSERT INTO jobs (org_id, id, kind, payload, dedupe_key)
SELECT d.org_id, app_uuidv7(), 'documents.index', jsonb_build_object('id', d.id), d.id::text
  FROM documents d
 WHERE NOT d.is_indexed
ON CONFLICT (org_id, kind, dedupe_key) WHERE dedupe_key IS NOT NULL AND status = 'pending' DO NOTHING;
