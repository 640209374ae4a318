-- An MFA sign-in challenge (the `mfa_token` of POST /v1/auth/login) opens one session: its token id is recorded when
-- it succeeds, and a second use is refused. Before, the same challenge could be completed again with a later code
-- for its five minutes. Rows are kept only until the challenge would have expired anyway.
CREATE TABLE mfa_challenges_spent (
  jti text PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL
);
CREATE INDEX mfa_challenges_spent_expiry ON mfa_challenges_spent (expires_at);
