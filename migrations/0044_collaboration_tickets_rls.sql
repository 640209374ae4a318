-- Tickets are redeemed through the owner connection (a ticket names its organization, as an API key does),
-- but the table still carries the tenant policy like every table with org_id: defence in depth.
SELECT app_enable_tenant_rls('collaboration_tickets');
