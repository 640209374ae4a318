import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailer } from './smtp-client.js';
import { MailNotConfiguredError } from './port.js';
import { SmtpSink } from './smtp-sink.js';

let sink: SmtpSink;
beforeAll(async () => { sink = await new SmtpSink().start(); });
afterAll(async () => { await sink.close(); });

describe('SMTP adapter', () => {
  it('delivers a message through a real SMTP conversation (EHLO, AUTH, MAIL, RCPT, DATA, QUIT)', async () => {
    const mailer = createMailer({ smtpUrl: sink.url, smtpFrom: 'alerts@example.test' });
    expect(mailer.configured).toBe(true);
    const before = sink.messages.length;
    await mailer.send({ to: ['someone@example.test'], subject: 'Hello', text: 'Line one\r\n.dot line' });
    const [m] = (await sink.waitFor(before + 1)).slice(before);
    expect(m.from).toBe('alerts@example.test');
    expect(m.to).toEqual(['someone@example.test']);
    expect(m.auth).toBe('sink');
    expect(m.data).toContain('Subject: Hello');
    expect(m.data).toContain('.dot line');
    mailer.close();
  });

  it('rejects with the relay error when the server refuses the message', async () => {
    const mailer = createMailer({ smtpUrl: sink.url, smtpFrom: 'alerts@example.test' });
    sink.failNext = 1;
    await expect(mailer.send({ to: ['x@example.test'], subject: 's', text: 't' })).rejects.toThrow(/451/);
    mailer.close();
  });

  it('gives up on a server that accepts the connection but never speaks (greeting timeout), instead of waiting minutes', async () => {
    const silent = net.createServer(() => {}); // accepts, says nothing
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as net.AddressInfo).port;
    try {
      const mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${port}`, smtpFrom: 'alerts@example.test' }, { connectionTimeout: 500, greetingTimeout: 300, socketTimeout: 500 });
      const started = Date.now();
      await expect(mailer.send({ to: ['a@example.test'], subject: 's', text: 't' })).rejects.toThrow(/greeting|timeout/i);
      expect(Date.now() - started).toBeLessThan(3_000);
      mailer.close();
    } finally {
      silent.close();
    }
  });

  it('is not configured without SMTP_URL and SMTP_FROM, and says so', async () => {
    const mailer = createMailer({ smtpUrl: null, smtpFrom: null });
    expect(mailer.configured).toBe(false);
    await expect(mailer.send({ to: ['x@example.test'], subject: 's', text: 't' })).rejects.toBeInstanceOf(MailNotConfiguredError);
    expect(createMailer({ smtpUrl: sink.url, smtpFrom: null }).configured).toBe(false);
  });
});
