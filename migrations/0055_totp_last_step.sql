-- RFC 6238 §5.2: an authenticator code is good once. The last TOTP time step (counter = unix seconds / 30) accepted
-- for a user, one per use: signing in (mfa/verify) and stepping up (mfa/step-up). A code of that step or an earlier
-- one is refused for the same use. Services record a step with one conditional UPDATE (... WHERE col IS NULL OR
-- col < $step), so two requests carrying the same code cannot both pass. The uses are kept apart so that the code a
-- user has just typed to activate MFA or to sign in still steps up (or signs in) within the same 30 s: a client
-- doing enroll, activate, sign-in and step-up in one go needs no wait, while a code seen once cannot be replayed for
-- the same purpose. NULL: no code accepted for that use since the current secret was enrolled (enrolling resets
-- both). Like the other MFA columns they are written and read by the owner pool only: the request role's column
-- grants on users (0001) do not include them.
ALTER TABLE users ADD COLUMN mfa_totp_login_step bigint, ADD COLUMN mfa_totp_step_up_step bigint;
