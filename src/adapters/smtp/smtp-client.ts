import nodemailer from 'nodemailer';
import type { Transporter } from 'nodemailer';
import { MailNotConfiguredError, type Mailer, type MailMessage } from './port.js';

/**
 * SMTP through nodemailer, configured by SMTP_URL (smtp://user:pass@host:port, smtps:// for implicit TLS)
 * and SMTP_FROM. Without both, `configured` is false and send() rejects with MailNotConfiguredError.
 */
export function createMailer(cfg: { smtpUrl: string | null; smtpFrom: string | null }): Mailer {
  if (!cfg.smtpUrl || !cfg.smtpFrom) {
    return {
      configured: false,
      async send() { throw new MailNotConfiguredError(); },
      close() {},
    };
  }
  const transport: Transporter = nodemailer.createTransport(cfg.smtpUrl, { from: cfg.smtpFrom });
  const from = cfg.smtpFrom;
  return {
    configured: true,
    async send(m: MailMessage) {
      const info = await transport.sendMail({ from, to: m.to, subject: m.subject, text: m.text, ...(m.html ? { html: m.html } : {}) });
      return { messageId: (info as { messageId?: string }).messageId ?? null };
    },
    close() { transport.close(); },
  };
}
