-- Single-use tokens that set a password: "reset" (a forgotten password, 60 minutes) and "invite" (the first password
-- of an account created by an invitation, 7 days). Only the SHA-256 of a token is stored, so reading the table does
-- not give a usable token. Users are global, not a tenant's rows: the owner pool reads this table (like the sign-in
-- lookups), and the request role has no access at all.
CREATE TABLE password_tokens (
  token_hash text PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  purpose text NOT NULL CHECK (purpose IN ('reset', 'invite')),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX password_tokens_user ON password_tokens (user_id);
REVOKE ALL ON password_tokens FROM platform_app;
