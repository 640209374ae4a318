-- Alert rules (spec 2.7, 4.6) and the record of every delivery they cause.
CREATE TABLE alert_rules (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  name text NOT NULL,
  description text,
  event_type text NOT NULL,
  conditions jsonb NOT NULL DEFAULT '{}',
  channels text[] NOT NULL DEFAULT '{in_app}',
  -- Slack incoming-webhook URL, sealed with the platform key (it is a bearer secret).
  slack_webhook_url_sealed text,
  is_enabled boolean NOT NULL DEFAULT true,
  created_by uuid REFERENCES users(id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, id)
);
CREATE INDEX alert_rules_list ON alert_rules (org_id, id DESC);
-- The event subscriber's lookup: enabled rules of one organization and event type.
CREATE INDEX alert_rules_match ON alert_rules (org_id, event_type) WHERE is_enabled;
SELECT app_enable_tenant_rls('alert_rules');

-- One row per (rule, event, channel): pending -> delivered | retrying -> ... -> delivered | failed.
CREATE TABLE alert_deliveries (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  alert_rule_id uuid NOT NULL,
  event_type text NOT NULL,
  target_type text,
  target_id text,
  channel text NOT NULL CHECK (channel IN ('in_app', 'email', 'push', 'slack')),
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'retrying', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  last_error text,
  event jsonb NOT NULL,
  delivered_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, id),
  FOREIGN KEY (org_id, alert_rule_id) REFERENCES alert_rules (org_id, id) ON DELETE CASCADE
);
CREATE INDEX alert_deliveries_rule ON alert_deliveries (org_id, alert_rule_id, id DESC);
SELECT app_enable_tenant_rls('alert_deliveries');

-- Every attempt of a delivery, with its outcome: the history behind alert_deliveries.status.
CREATE TABLE alert_delivery_attempts (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  delivery_id uuid NOT NULL,
  attempt integer NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('delivered', 'failed')),
  error text,
  at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, delivery_id, attempt),
  FOREIGN KEY (org_id, delivery_id) REFERENCES alert_deliveries (org_id, id) ON DELETE CASCADE
);
SELECT app_enable_tenant_rls('alert_delivery_attempts');
