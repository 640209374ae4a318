/** One outgoing e-mail. */
export interface MailMessage { to: string[]; subject: string; text: string; html?: string }

/** Outgoing mail port: the SMTP client in production, a local SMTP sink in tests. */
export interface Mailer {
  /** False when no SMTP relay is configured; callers answer 503 or record the delivery as failed. */
  readonly configured: boolean;
  /** Sends one message; rejects with the relay's error (callers retry). */
  send(message: MailMessage): Promise<{ messageId: string | null }>;
  close(): void;
}

export class MailNotConfiguredError extends Error {
  constructor() { super('E-mail is not configured on this deployment (set SMTP_URL and SMTP_FROM)'); this.name = 'MailNotConfiguredError'; }
}
