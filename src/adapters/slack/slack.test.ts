import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSlackWebhook } from './webhook-client.js';
import { SlackWebhookError } from './port.js';
import { WebhookServer } from './webhook-server.js';

let hook: WebhookServer;
beforeAll(async () => { hook = await new WebhookServer().start(); });
afterAll(async () => { await hook.close(); });

describe('Slack incoming-webhook adapter', () => {
  it('POSTs {text} as JSON to the webhook URL', async () => {
    await createSlackWebhook().post(hook.url('/services/A/B/C'), { text: 'hello *world*' });
    const last = hook.received.at(-1)!;
    expect(last.path).toBe('/services/A/B/C');
    expect(last.headers['content-type']).toBe('application/json');
    expect(last.body).toEqual({ text: 'hello *world*' });
  });

  it('rejects with the status when the webhook fails', async () => {
    hook.failCount = 1;
    const err = await createSlackWebhook().post(hook.url(), { text: 'x' }).catch((e) => e);
    expect(err).toBeInstanceOf(SlackWebhookError);
    expect(err.status).toBe(500);
    await createSlackWebhook().post(hook.url(), { text: 'y' });
  });

  it('rejects when the webhook is unreachable', async () => {
    const err = await createSlackWebhook({ timeoutMs: 2000 }).post('http://127.0.0.1:1/x', { text: 'x' }).catch((e) => e);
    expect(err).toBeInstanceOf(SlackWebhookError);
    expect(err.status).toBeNull();
  });
});
