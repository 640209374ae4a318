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

CREATE OR REPLACE FUNCTION app_document_content_vector(cfg regconfig, doc_kind text, content text)
  RETURNS tsvector LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  v tsvector;
BEGIN
  IF doc_kind IN ('sheet', 'deck') THEN
    BEGIN
      v := jsonb_to_tsvector(cfg, content::jsonb, '["string", "numeric"]');
      IF pg_column_size(v) <= 900000 THEN RETURN v; END IF;
    EXCEPTION
      WHEN invalid_text_representation THEN
        RETURN app_bounded_tsvector(cfg, content);
      WHEN program_limit_exceeded THEN
        NULL;
    END;
    -- The JSON text without its keys (every `"...":`): the values and punctuation the parser skips. A regular
    -- expression, not jsonb_path_query('$.**'), which took seconds on a sheet of 200,000 cells.
    RETURN app_bounded_tsvector(cfg, regexp_replace(content, '"(?:[^"\\]|\\.)*"\s*:', ' ', 'g'));
  END IF;
  RETURN app_bounded_tsvector(cfg, content);
END $$;
