import type { FastifyInstance } from 'fastify';
import { Envelope, ok } from '../../core/http/envelope.js';
import * as S from './accounts.schemas.js';
import { confirmPasswordReset, requestPasswordReset } from './password-reset.service.js';

/** Password reset and first passwords of invited accounts (docs/accounts.md); public, on the auth routes' per-address budget. */
export default async function passwordResetRoutes(app: FastifyInstance) {
  const pub = { auth: 'public' as const, rateLimit: { max: app.platform.config.rateLimit.authMax, key: 'ip' as const } };

  app.post('/v1/auth/password-reset', { config: pub, schema: { summary: 'E-mail a password reset token (same answer whether or not the account exists)', body: S.PasswordResetBody, response: { 202: Envelope(S.PasswordResetOut) } } },
    async (req, reply) => reply.code(202).send(ok(await requestPasswordReset(req.ctx, (req.body as { email: string }).email))));

  app.post('/v1/auth/password-reset/confirm', { config: pub, schema: { summary: 'Set the password with a reset or invitation token; ends every session of the account', body: S.PasswordConfirmBody, response: { 200: Envelope(S.PasswordConfirmOut) } } },
    async (req) => ok(await confirmPasswordReset(req.ctx, req.body as { token: string; password: string })));
}
