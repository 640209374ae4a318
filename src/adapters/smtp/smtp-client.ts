import nodemailer from 'nodemailer';
import type { Transporter } from 'nodemailer';
import { MailNotConfiguredError, type Mailer, type MailMessage } from './port.js';

/** Milliseconds to connect, to get the server's greeting, and of silence on an open connection. */
export const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 };

/**
 * SMTP through nodemailer, configured by SMTP_URL (smtp://user:pass@host:port, smtps:// for implicit TLS)
 * and SMTP_FROM. Without both, `configured` is false and send() rejects with MailNotConfiguredError.
 */
export function createMailer(cfg: { smtpUrl: string | null; smtpFrom: string | null }, timeouts = SMTP_TIMEOUTS): Mailer {
  if (!cfg.smtpUrl || !cfg.smtpFrom) {
    return {
      configured: false,
      async send() { throw new MailNotConfiguredError(); },
      close() {},
    };
  }
  // nodemailer's defaults wait up to 2 minutes for a connection and 10 minutes for a silent socket: one server that
  // stops answering would hold its delivery job (and a job-runner slot) that long. A send that times out fails and
  // is retried with backoff like any failed send.
  const transport: Transporter = nodemailer.createTransport({ url: cfg.smtpUrl, ...timeouts }, { from: cfg.smtpFrom });
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
