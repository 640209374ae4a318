-- Delta pulls start at the first change after `since`: found through this index instead of a scan
-- from the organization's first change (changed_at follows change_seq within an organization).
CREATE INDEX sync_changes_time ON sync_changes (org_id, resource_type, changed_at);
