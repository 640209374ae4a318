import type { Mailer } from './port.js';
import { createMailer } from './smtp-client.js';

type MailConfig = { smtpUrl: string | null; smtpFrom: string | null };
const byPlatform = new WeakMap<object, Mailer>();

/**
 * The platform's one SMTP client, built once from its configuration and shared by every area that sends mail
 * (alert e-mails, password resets, invitations). Areas close it with their app; closing is idempotent.
 */
export function platformMailer(platform: { config: MailConfig }): Mailer {
  let m = byPlatform.get(platform);
  if (!m) byPlatform.set(platform, (m = createMailer(platform.config)));
  return m;
}
