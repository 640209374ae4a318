-- Search folded case for ASCII letters only: to_tsvector and to_tsquery lowercase with the database's ctype, and the
-- embedded cluster (like CI's) is created with the C locale, where that is ASCII only, so "привет" did not find
-- "Привет", nor "élan" "Élan". Text is now lowercased with Unicode case mapping before it is parsed, whatever the
-- database's locale: PostgreSQL 17's built-in C.UTF-8 collation, else ICU's root collation, else the database's own
-- lower() (a server without either has its locale's rules). Queries are lowercased by the server the same way
-- (src/areas/documents/search.ts).
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
    -- The JSON text without its keys (every `"...":`): the values and punctuation the parser skips.
    RETURN app_bounded_tsvector(cfg, regexp_replace(folded, '"(?:[^"\\]|\\.)*"\s*:', ' ', 'g'));
  END IF;
  RETURN app_bounded_tsvector(cfg, folded);
END $$;

-- Documents already indexed whose title or content has a letter outside ASCII: their vectors again.
UPDATE documents SET search = setweight(to_tsvector(language, app_unicode_lower(title)), 'A') || setweight(app_document_content_vector(language, kind, content), 'B')
 WHERE search IS NOT NULL AND (title ~ '[^\x01-\x7f]' OR content ~ '[^\x01-\x7f]');
