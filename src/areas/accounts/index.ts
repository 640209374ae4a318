import type { FastifyInstance } from 'fastify';
import { registerPathRow } from '../../core/http/path-rows.js';
import authRoutes from './auth.routes.js';
import organizationRoutes from './organizations.routes.js';
import apiKeyRoutes from './api-keys.routes.js';
import adminRoutes from './admin.routes.js';
import passwordResetRoutes from './password-reset.routes.js';
import { platformMailer } from '../../adapters/smtp/platform-mailer.js';
import { RETENTION_EVERY_MS } from '../../core/retention.js';
import { purgeAccounts } from './retention.js';
import { registerInvitationMail } from './invitation-mail.js';

/** Accounts and tenancy (design: accounts-and-tenancy.md). */
export default async function accountsArea(app: FastifyInstance) {
  registerPathRow('member', 'Member', 'memberships', { column: 'user_id' });
  registerPathRow('api_key', 'API key', 'api_keys');
  await app.register(authRoutes);
  await app.register(passwordResetRoutes);
  await app.register(organizationRoutes);
  await app.register(apiKeyRoutes);
  await app.register(adminRoutes);
  registerInvitationMail(app.platform);
  app.platform.jobs.every('accounts.retention', RETENTION_EVERY_MS, async () => { await purgeAccounts(app.platform.db.sys); });
  app.addHook('onClose', async () => { platformMailer(app.platform).close(); });
}
