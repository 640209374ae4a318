-- 1. A job attempt that fails while a newer job of the same dedupe key is already pending is `superseded` (the newer
-- one does the same work): putting it back to `pending` would break jobs_dedupe (one pending job per key). The
-- runner used to try, the update failed, and the job stayed `running` without a heartbeat; once stale, the reset of
-- stale jobs at the start of every round failed on the same index, and no job of any tenant ran again.
ALTER TABLE jobs DROP CONSTRAINT jobs_status_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_status_check CHECK (status IN ('pending', 'running', 'done', 'failed', 'superseded'));

-- 2. A search vector is at most 1 MB (PostgreSQL's limit for tsvector). A long document of many distinct words (or a
-- large sheet) went over it, so its indexing failed on every attempt. Now the content is indexed on a prefix whose
-- vector fits in 900,000 bytes, found by halving the text until it does (so at least half the longest one that
-- would), leaving room for the title's part; the rest of such a document is not searchable. STABLE, not IMMUTABLE:
-- pg_column_size is STABLE (no index or generated column uses these functions). Sheets and decks index their JSON's
-- values as before, and
-- fall back to the JSON text without its keys (which would be words of every sheet) when those are too many.
CREATE OR REPLACE FUNCTION app_bounded_tsvector(cfg regconfig, body text) RETURNS tsvector
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  max_bytes constant integer := 900000;
  n integer := length(body);
  v tsvector;
BEGIN
  IF body IS NULL THEN RETURN ''::tsvector; END IF;
  LOOP
    BEGIN
      v := to_tsvector(cfg, left(body, n));
      IF pg_column_size(v) <= max_bytes OR n <= 1 THEN RETURN v; END IF;
    EXCEPTION WHEN program_limit_exceeded THEN
      NULL; -- over 1 MB: try a shorter prefix
    END;
    n := n / 2;
  END LOOP;
END $$;

-- 3. Search folded case for ASCII letters only: to_tsvector and to_tsquery lowercase with the database's ctype, and
-- the embedded cluster (like CI's) is created with the C locale, where that is ASCII only, so "привет" did not find
-- "Привет", nor "élan" "Élan". Text is lowercased with Unicode case mapping before it is parsed, whatever the
-- database's locale: PostgreSQL 17's built-in C.UTF-8 collation, else ICU's root collation, else the database's own
-- lower() (a server without either has its locale's rules). Titles are lowercased by the index statement
-- (documents.repo.ts indexDocument), queries by the server (src/areas/documents/search.ts); migration 0067
-- re-indexes the documents whose vectors were made before.
DO $$
DECLARE
  body text;
BEGIN
  IF EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'pg_c_utf8') THEN
    body := 'SELECT lower(t COLLATE pg_c_utf8)';
  ELSIF EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu') THEN
    body := 'SELECT lower(t COLLATE "und-x-icu")';
  ELSE
    body := 'SELECT lower(t)';
  END IF;
  EXECUTE format('CREATE OR REPLACE FUNCTION app_unicode_lower(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS %L', body);
END $$;

-- Content lowercased first (a sheet's JSON stays valid JSON: its keys are lowercase, its escapes and literals too).
CREATE OR REPLACE FUNCTION app_document_content_vector(cfg regconfig, doc_kind text, content text)
  RETURNS tsvector LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v tsvector;
  folded constant text := app_unicode_lower(content);
BEGIN
  IF doc_kind IN ('sheet', 'deck') THEN
    BEGIN
      v := jsonb_to_tsvector(cfg, folded::jsonb, '["string", "numeric"]');
      IF pg_column_size(v) <= 900000 THEN RETURN v; END IF;
    EXCEPTION
      WHEN invalid_text_representation THEN
        RETURN app_bounded_tsvector(cfg, folded);
      WHEN program_limit_exceeded THEN
        NULL;
    END;
    -- The JSON text without its keys (every `"...":`): the values and punctuation the parser skips. A regular
    -- expression, not jsonb_path_query('$.**'), which took seconds on a sheet of 200,000 cells.
    RETURN app_bounded_tsvector(cfg, regexp_replace(folded, '"(?:[^"\\]|\\.)*"\s*:', ' ', 'g'));
  END IF;
  RETURN app_bounded_tsvector(cfg, folded);
END $$;
