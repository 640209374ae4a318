-- The content part of a document's search vector. A sheet's or deck's content is its JSON model: indexed as text,
-- the model's keys (sheets, cells, name, slides, title, body, v, f) were words of every sheet and deck, so a search
-- for "cells" found them all. For those kinds only the JSON's values (strings and numbers: sheet names, cell
-- values and formulas, slide titles and bodies) are indexed; content that is not JSON (a deck mid-edit stored
-- before decks were checked) falls back to the text.
CREATE OR REPLACE FUNCTION app_document_content_vector(cfg regconfig, doc_kind text, content text)
  RETURNS tsvector LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
BEGIN
  IF doc_kind IN ('sheet', 'deck') THEN
    BEGIN
      RETURN jsonb_to_tsvector(cfg, content::jsonb, '["string", "numeric"]');
    EXCEPTION WHEN invalid_text_representation THEN
      RETURN to_tsvector(cfg, content);
    END;
  END IF;
  RETURN to_tsvector(cfg, content);
END $$;

-- Sheets and decks indexed before: their vectors again, the same way.
UPDATE documents SET search = setweight(to_tsvector(language, title), 'A') || setweight(app_document_content_vector(language, kind, content), 'B')
  WHERE kind IN ('sheet', 'deck') AND search IS NOT NULL;
