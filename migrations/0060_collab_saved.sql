-- How far each collaboratively edited document's text has been written back to documents.content: the highest
-- document_updates.seq the written text included. A server that crashes between appending an update (durable at
-- once) and writing the text back (debounced) leaves the two apart; the collaboration reconcile job
-- (src/areas/documents/collab-reconcile.ts) finds documents whose updates go past this mark and writes their text.
CREATE TABLE collab_saved (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  document_id uuid NOT NULL,
  seq bigint NOT NULL,
  PRIMARY KEY (org_id, document_id),
  FOREIGN KEY (org_id, document_id) REFERENCES documents (org_id, id) ON DELETE CASCADE
);
SELECT app_enable_tenant_rls('collab_saved');
-- Documents saved before this table existed count as written back up to their current updates.
INSERT INTO collab_saved (org_id, document_id, seq) SELECT org_id, document_id, max(seq) FROM document_updates GROUP BY org_id, document_id;
