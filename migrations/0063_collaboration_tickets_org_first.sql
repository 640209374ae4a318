-- Tenant tables lead their primary key with org_id (design, Tenancy: shardable by organization); the ticket table
-- was keyed by the ticket's hash alone. Redeeming a ticket still looks it up by its hash before the organization is
-- known (the ticket is what names it, as an API key's prefix does), through an index of its own.
ALTER TABLE collaboration_tickets DROP CONSTRAINT collaboration_tickets_pkey;
ALTER TABLE collaboration_tickets ADD PRIMARY KEY (org_id, ticket_hash);
CREATE UNIQUE INDEX collaboration_tickets_hash ON collaboration_tickets (ticket_hash);
