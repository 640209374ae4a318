import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSlackWebhook } from './webhook-client.js';
import { SlackWebhookError } from './port.js';
import { WebhookServer } from './webhook-server.js';

let hook: WebhookServer;
// The stand-in for Slack listens on 127.0.0.1, which only a client allowing private hosts may call.
const local = { allowPrivateHosts: true };
beforeAll(async () => { hook = await new WebhookServer().start(); });
afterAll(async () => { await hook.close(); });

describe('Slack incoming-webhook adapter', () => {
  it('POSTs {text} as JSON to the webhook URL', async () => {
    await createSlackWebhook(local).post(hook.url('/services/A/B/C'), { text: 'hello *world*' });
    const last = hook.received.at(-1)!;
    expect(last.path).toBe('/services/A/B/C');
    expect(last.headers['content-type']).toBe('application/json');
    expect(last.body).toEqual({ text: 'hello *world*' });
  });

  it('rejects with the status when the webhook fails', async () => {
    hook.failCount = 1;
    const err = await createSlackWebhook(local).post(hook.url(), { text: 'x' }).catch((e) => e);
    expect(err).toBeInstanceOf(SlackWebhookError);
    expect(err.status).toBe(500);
    await createSlackWebhook(local).post(hook.url(), { text: 'y' });
  });

  it('rejects when the webhook is unreachable', async () => {
    const err = await createSlackWebhook({ ...local, timeoutMs: 2000 }).post('http://127.0.0.1:1/x', { text: 'x' }).catch((e) => e);
    expect(err).toBeInstanceOf(SlackWebhookError);
    expect(err.status).toBeNull();
  });

  it('refuses non-public targets unless private hosts are allowed: address literals before connecting, names after resolving', async () => {
    const guarded = (resolve?: Parameters<typeof createSlackWebhook>[0]['resolve']) => createSlackWebhook({ allowPrivateHosts: false, timeoutMs: 2000, resolve });
    const before = hook.received.length;
    for (const url of [hook.url('/x'), 'http://169.254.169.254/latest/meta-data', 'http://[::1]/x', 'http://[::ffff:127.0.0.1]/x', 'http://localhost/x', 'http://10.1.2.3/x']) {
      const err = await guarded().post(url, { text: 'x' }).catch((e) => e);
      expect(err, url).toBeInstanceOf(SlackWebhookError);
      expect(err.message, url).toMatch(/refused/);
    }
    // A public-looking name whose DNS answer is loopback (rebinding): refused after resolution, nothing is sent.
    const port = new URL(hook.url()).port;
    const toLoopback = ((_h: string, _o: unknown, cb: (e: null, a: { address: string; family: number }[]) => void) => cb(null, [{ address: '127.0.0.1', family: 4 }])) as never;
    const err = await guarded(toLoopback).post(`http://hooks.example.com:${port}/x`, { text: 'x' }).catch((e) => e);
    expect(err).toBeInstanceOf(SlackWebhookError);
    expect(err.message).toMatch(/non-public address \(127\.0\.0\.1\)/);
    expect(hook.received.length).toBe(before);
    // The same name and server with private hosts allowed: delivered, so the refusal above is the guard's doing.
    await createSlackWebhook({ allowPrivateHosts: true, resolve: toLoopback }).post(`http://hooks.example.com:${port}/y`, { text: 'y' });
    expect(hook.received.at(-1)!.path).toBe('/y');
  });
});
