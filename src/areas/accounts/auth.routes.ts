import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope, ok } from '../../core/http/envelope.js';
import { AppError } from '../../core/errors.js';
import type { Principal } from '../../core/auth/principal.js';
import * as S from './accounts.schemas.js';
import * as auth from './auth.service.js';
import { refreshSession } from './sessions.service.js';

/** Sign-up, sign-in, tokens and MFA (design: accounts-and-tenancy). Auth routes have the stricter per-address budget. */
export default async function authRoutes(app: FastifyInstance) {
  const authLimit = { max: app.platform.config.rateLimit.authMax, key: 'ip' as const };
  const pub = { auth: 'public' as const, rateLimit: authLimit };
  const userOnly = { credentials: ['user' as const] };
  // Signed-in routes that mint sessions or check codes: the auth budget too, per user (every new token pair would
  // otherwise start a budget of its own).
  const userAuth = { ...userOnly, rateLimit: { max: app.platform.config.rateLimit.authMax, key: 'user' as const } };

  // Sign-up switched off is refused before the body is looked at (auth order: feature before validation).
  const signupOpen = async () => {
    if (!app.platform.config.allowSignup) throw new AppError('FEATURE_DISABLED', 'Sign-up is disabled on this platform', { feature: 'signup' });
  };
  app.post('/v1/auth/register', { config: pub, preValidation: signupOpen, schema: { summary: 'Create an account and its first organization', body: S.RegisterBody, response: { 201: Envelope(S.TokensOut) } } },
    async (req, reply) => reply.code(201).send(ok(await auth.register(req.ctx, req.body as S.RegisterInput))));

  app.post('/v1/auth/login', { config: pub, schema: { summary: 'Sign in with e-mail and password', body: S.LoginBody, response: { 200: Envelope(Type.Union([S.TokensOut, S.MfaChallengeOut])) } } },
    async (req) => ok(await auth.login(req.ctx, req.body as S.LoginInput)));

  app.post('/v1/auth/mfa/verify', { config: pub, schema: { summary: 'Complete a sign-in with an authenticator code', body: S.MfaVerifyBody, response: { 200: Envelope(S.TokensOut) } } },
    async (req) => { const b = req.body as { mfa_token: string; code: string }; return ok(await auth.verifyMfaLogin(req.ctx, b.mfa_token, b.code)); });

  app.post('/v1/auth/refresh', { config: pub, schema: { summary: 'Rotate a refresh token for a new token pair', body: S.RefreshBody, response: { 200: Envelope(S.TokensOut) } } },
    async (req) => ok(await refreshSession(req.ctx, (req.body as { refresh_token: string }).refresh_token)));

  app.post('/v1/auth/logout', { config: userOnly, schema: { summary: 'End the current session', response: { 204: Type.Null({ description: 'No content' }) } } },
    async (req, reply) => { await auth.logout(req.ctx); return reply.code(204).send(); });

  app.post('/v1/auth/switch-organization', { config: userAuth, schema: { summary: 'Get tokens bound to another organization of the caller', body: S.SwitchOrgBody, response: { 200: Envelope(S.TokensOut) } } },
    async (req) => ok(await auth.switchOrganization(req.ctx, (req.body as { organization_id: string }).organization_id)));

  app.post('/v1/auth/mfa/totp/enroll', { config: userAuth, schema: { summary: 'Start TOTP enrollment', response: { 200: Envelope(Type.Object({ secret: Type.String(), otpauth_url: Type.String() })) } } },
    async (req) => ok(await auth.enrollTotp(req.ctx)));

  app.post('/v1/auth/mfa/totp/activate', { config: userAuth, schema: { summary: 'Activate TOTP with a first code', body: S.CodeBody, response: { 200: Envelope(Type.Object({ mfa_enabled: Type.Boolean(), mfa_at: Type.Union([S.Timestamp, Type.Null()]) })) } } },
    async (req) => ok(await auth.activateTotp(req.ctx, (req.body as { code: string }).code)));

  app.post('/v1/auth/mfa/step-up', { config: userAuth, schema: { summary: 'Confirm an authenticator code; the session counts as stepped up for 5 minutes', body: S.CodeBody, response: { 200: Envelope(Type.Object({ mfa_at: S.Timestamp })) } } },
    async (req) => ok(await auth.stepUp(req.ctx, (req.body as { code: string }).code)));

  // The body depends only on the principal, and a principal object is immutable: the credential cache replaces it
  // whenever anything it holds changes (role, entitlements, step-up, revocation). So the body is serialized once per
  // principal and sent as is; the hottest authenticated read then skips building and serializing 1.7 KB of JSON.
  const meBodies = new WeakMap<Principal, string>();
  app.get('/v1/me', { schema: { summary: 'The caller: user, organization, role, permissions and credential', response: { 200: Envelope(S.MeOut) } } },
    (req, reply) => {
      const principal = req.principal!;
      let body = meBodies.get(principal);
      if (body === undefined) { body = reply.serialize(ok(auth.me(req.ctx))) as string; meBodies.set(principal, body); }
      reply.type('application/json; charset=utf-8').send(body);
    });
}
