import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { appWithCapturedLogs, buildTestApp, newTenant, until, type TestApp } from '../../../test/helpers.js';

let t: TestApp;
let logged: Awaited<ReturnType<typeof appWithCapturedLogs>>;
let base: string;
beforeAll(async () => {
  t = await buildTestApp();
  logged = await appWithCapturedLogs(t);
  await logged.app.listen({ port: 0, host: '127.0.0.1' });
  base = `ws://127.0.0.1:${(logged.app.server.address() as { port: number }).port}`;
});
afterAll(async () => { await logged?.app.close(); await t?.close(); });

describe('log lines of WebSockets', () => {
  it('an accepted socket logs when it opens (request id, organization, user, URL without its credential) and when it closes (code, duration)', async () => {
    const a = await newTenant(t.app);
    const doc = (await t.app.inject({ method: 'POST', url: '/v1/documents', headers: a.auth, payload: { title: 'Logged' } })).json().data.id;
    const ticket = (await t.app.inject({ method: 'POST', url: '/v1/collaboration/ticket', headers: a.auth })).json().data.ticket;
    const project = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'Logged' } })).json().data.id;
    const sheet = (await t.app.inject({ method: 'POST', url: `/v1/projects/${project}/sheets`, headers: a.auth, payload: { name: 'Logged' } })).json().data.document.id;
    const urls = [`/v1/collaboration/ws/${doc}?ticket=${ticket}`, `/v1/sheet/ws?token=${a.token}&documentId=${sheet}`];
    for (const url of urls) {
      const ws = new WebSocket(`${base}${url}`, { headers: { 'x-request-id': `socket-log-${doc}-${urls.indexOf(url)}` } });
      await new Promise((r) => ws.once('open', r));
      ws.close(1000);
      await new Promise((r) => ws.once('close', r));
    }
    const mine = (reqId: string) => logged.lines.filter((l) => l.reqId === reqId && String(l.msg).startsWith('socket '));
    await until(() => mine(`socket-log-${doc}-1`).length === 2);
    const expectedUrls = [`/v1/collaboration/ws/${doc}?ticket=[REDACTED]`, `/v1/sheet/ws?token=[REDACTED]&documentId=${sheet}`];
    for (const [i, url] of expectedUrls.entries()) {
      const [opened, closed] = mine(`socket-log-${doc}-${i}`);
      expect(opened).toMatchObject({ msg: 'socket opened', level: 30, url, orgId: a.orgId, userId: a.userId });
      expect(closed).toMatchObject({ msg: 'socket closed', level: 30, url, code: 1000 });
      expect(typeof closed.ms).toBe('number');
    }
    expect(JSON.stringify(logged.lines)).not.toContain(ticket);
    expect(JSON.stringify(logged.lines)).not.toContain(a.token);
  });
});
