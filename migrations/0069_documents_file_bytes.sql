-- The per-organization file storage quota (src/areas/documents/files.service.ts) sums the sizes of the organization's
-- stored files at every upload: this index holds just those rows and their sizes, so the sum reads the files only,
-- not every document.
CREATE INDEX documents_files ON documents (org_id) INCLUDE (file_size) WHERE file_key IS NOT NULL;
