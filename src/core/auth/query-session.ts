import { AppError } from '../errors.js';
import type { CredentialResolver } from './credentials.js';
import type { Principal } from './principal.js';

/**
 * The signed-in user behind a session access token passed in the `token` query parameter (spec 5.7: the sheet
 * socket and the sheet export), its token version and session checked as for a bearer. API keys (any case of the
 * `svc_` prefix) are refused: these routes take a session token only. `what` names the route in the messages.
 */
export async function principalFromQueryToken(credentials: CredentialResolver, token: unknown, what: string): Promise<Principal> {
  if (token !== undefined && typeof token !== 'string') throw new AppError('AUTH_TOKEN_INVALID', 'Query parameter "token" must be given once');
  if (!token) throw new AppError('AUTH_TOKEN_INVALID', 'Query parameter "token" (a session access token) is required');
  if (/^svc_/i.test(token)) throw new AppError('AUTH_TOKEN_INVALID', `${what} needs a session token, not an API key`);
  // Every API key starts with svc_ (refused above): what resolves here is a user's session.
  return credentials.resolve(token);
}
