-- Documents indexed before migration 0065 lowercased text with Unicode case mapping (its part 3): the vectors again of
-- those whose title or content has a letter outside ASCII, the only ones whose vector changes.
UPDATE documents SET search = setweight(to_tsvector(language, app_unicode_lower(title)), 'A') || setweight(app_document_content_vector(language, kind, content), 'B')
 WHERE search IS NOT NULL AND (title ~ '[^\x01-\x7f]' OR content ~ '[^\x01-\x7f]');
