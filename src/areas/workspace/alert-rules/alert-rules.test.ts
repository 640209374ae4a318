import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { buildTestApp, newTenant, bearer, errorOf, type TestApp } from '../../../../test/helpers.js';
import { memberOf, waitFor } from '../test-support.js';
import { handleWorkspaceEvent } from '../index.js';
import { uuidv7 } from '../../../core/ids.js';
import { EVENT_TYPES } from './event-types.js';

let t: TestApp;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(async () => { await t.close(); });

const post = (headers: Record<string, string>, payload: unknown) => t.app.inject({ method: 'POST', url: '/v1/alert-rules', headers, payload: payload as object });

describe('POST /v1/alert-rules', () => {
  it('creates a rule with defaults (channels in_app, enabled) and answers 201', async () => {
    const a = await newTenant(t.app);
    const r = await post(a.auth, { name: 'Overdue work', event_type: 'task.overdue', description: 'Tell me', conditions: { priority: ['high', 'critical'] } });
    expect(r.statusCode).toBe(201);
    expect(r.json().data).toMatchObject({ org_id: a.orgId, name: 'Overdue work', description: 'Tell me', event_type: 'task.overdue', trigger_type: 'task.overdue',
      conditions: { priority: ['high', 'critical'] }, channels: ['in_app'], is_enabled: true, created_by: a.userId, slack_webhook_configured: false });
    expect(r.json().data.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refuses a Slack webhook on a loopback, private, link-local or local-name host (400 PRIVATE_ADDRESS) unless allowed', async () => {
    const guarded = await buildTestApp({ webhookAllowPrivateHosts: false });
    try {
      const a = await newTenant(guarded.app);
      for (const url of ['http://127.0.0.1:9/hook', 'http://169.254.169.254/latest/meta-data', 'https://[::1]/x', 'https://10.0.0.8/x', 'https://localhost/x', 'https://metadata.google.internal/x']) {
        const res = await guarded.app.inject({ method: 'POST', url: '/v1/alert-rules', headers: a.auth, payload: { name: 'n', event_type: 'task.created', channels: ['slack'], slack_webhook_url: url } });
        expect(errorOf(res, 400, 'VALIDATION_ERROR').details, url).toMatchObject({ field: 'slack_webhook_url', reason: 'PRIVATE_ADDRESS' });
      }
      // A URL that cannot be parsed (a port out of range) is invalid, not private.
      const badPort = await guarded.app.inject({ method: 'POST', url: '/v1/alert-rules', headers: a.auth, payload: { name: 'n', event_type: 'task.created', channels: ['slack'], slack_webhook_url: 'https://hooks.slack.com:99999/x' } });
      expect(errorOf(badPort, 400, 'VALIDATION_ERROR').details).toMatchObject({ field: 'slack_webhook_url', reason: 'INVALID_URL' });
      const ok = await guarded.app.inject({ method: 'POST', url: '/v1/alert-rules', headers: a.auth, payload: { name: 'n', event_type: 'task.created', channels: ['slack'], slack_webhook_url: 'https://hooks.slack.com/services/T0/B0/X' } });
      expect(ok.statusCode).toBe(201);
      expect((await guarded.app.inject({ method: 'GET', url: '/v1/alert-rules', headers: a.auth })).json().pagination.total).toBe(1);
    } finally { await guarded.close(); }
  });

  it('accepts an event type outside the catalogue and stores it as sent (the spec leaves the catalogue open)', async () => {
    const a = await newTenant(t.app);
    const r = await post(a.auth, { name: 'Custom', event_type: 'task_overdue' });
    expect(r.statusCode).toBe(201);
    expect(r.json().data).toMatchObject({ event_type: 'task_overdue', trigger_type: 'task_overdue', channels: ['in_app'] });
  });

  it('accepts trigger_type as an alias and condition as an alias of conditions', async () => {
    const a = await newTenant(t.app);
    const r = await post(a.auth, { name: 'alias', trigger_type: 'task.assigned', condition: { project_id: randomUUID() } });
    expect(r.statusCode).toBe(201);
    expect(r.json().data).toMatchObject({ event_type: 'task.assigned', trigger_type: 'task.assigned' });
    expect(Object.keys(r.json().data.conditions)).toEqual(['project_id']);
    expect((await post(a.auth, { name: 'both same', event_type: 'task.created', trigger_type: 'task.created' })).statusCode).toBe(201);
    // One type in two spellings, as rules match them: the rule keeps event_type as sent.
    const spelled = await post(a.auth, { name: 'both spellings', event_type: 'task-created', trigger_type: 'TASK.CREATED' });
    expect(spelled.statusCode).toBe(201);
    expect(spelled.json().data).toMatchObject({ event_type: 'task-created', trigger_type: 'task-created' });
    const both = await post(a.auth, { name: 'both conditions', event_type: 'task.created', conditions: { priority: 'high', a: { b: 1 } }, condition: { a: { b: 1 }, priority: 'high' } });
    expect(both.statusCode).toBe(201);
    expect(both.json().data.conditions).toEqual({ priority: 'high', a: { b: 1 } });
    expect((await post(a.auth, { name: 'both empty', event_type: 'task.created', conditions: {}, condition: {} })).statusCode).toBe(201);
    const disjoint = await post(a.auth, { name: 'both, other entries', conditions: { priority: 'high' }, condition: { title: { $contains: 'x' } } });
    expect(disjoint.statusCode).toBe(201);
    expect(disjoint.json().data.conditions).toEqual({ priority: 'high', title: { $contains: 'x' } });
    expect(errorOf(await post(a.auth, { name: 'differ', conditions: { priority: 'high' }, condition: { priority: 'low' } }), 400, 'VALIDATION_ERROR').details)
      .toMatchObject({ field: 'condition.priority' });
  });

  it('an error in the condition alias names condition, the field the client sent', async () => {
    const a = await newTenant(t.app);
    expect(errorOf(await post(a.auth, { name: 'x', condition: { title: { $regex: '.*' } } }), 400, 'VALIDATION_ERROR').details)
      .toMatchObject({ field: 'condition.title' });
    expect(errorOf(await post(a.auth, { name: 'x', conditions: { title: { $regex: '.*' } } }), 400, 'VALIDATION_ERROR').details)
      .toMatchObject({ field: 'conditions.title' });
    expect(errorOf(await post(a.auth, { name: 'x', condition: { title: 'x'.repeat(66_000) } }), 413, 'PAYLOAD_TOO_LARGE').details)
      .toMatchObject({ field: 'condition' });
  });

  it('without event_type or trigger_type (spec 4.6 requires only name) the rule hears every catalogue type: `*`', async () => {
    const a = await newTenant(t.app);
    const res = await post(a.auth, { name: 'Everything in one project', conditions: { project_id: randomUUID() } });
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toMatchObject({ name: 'Everything in one project', event_type: '*', trigger_type: '*', channels: ['in_app'], is_enabled: true });
    expect((await post(a.auth, { name: 'Said explicitly', trigger_type: '*' })).json().data.event_type).toBe('*');
  });

  it('refuses a missing name, conflicting or malformed event type and bad fields with 400 VALIDATION_ERROR', async () => {
    const a = await newTenant(t.app);
    for (const bad of [
      { name: 'x', event_type: '**' },
      { name: 'x', event_type: '*.created' },
      { event_type: 'task.overdue' },
      { name: '', event_type: 'task.overdue' },
      { name: '   \t ', event_type: 'task.overdue' },
      { name: '\u200B', event_type: 'task.overdue' },
      { name: 'x', event_type: 'task overdue!' },
      { name: 'x', event_type: 'x'.repeat(101) },
      { name: 'x', event_type: 'task.created', trigger_type: 'task.deleted' },
      { name: 'x', event_type: 'task.created', conditions: { a: 2 }, condition: { a: 1 } },
      { name: 'x', event_type: 'task.created', conditions: 'a' },
      { name: 'x', event_type: 'task.created', conditions: { title: { $regex: '.*' } } },
      { name: 'x', event_type: 'task.created', conditions: { title: { $in: 'a' } } },
      { name: 'x', event_type: 'task.created', channels: [] },
      { name: 'x', event_type: 'task.created', channels: ['sms'] },
      { name: 'x', event_type: 'task.created', channels: ['in_app', 'in_app'] },
      { name: 'x', event_type: 'task.created', channels: ['slack'], slack_webhook_url: 'ftp://example.com/x' },
      { name: 'x', event_type: 'task.created', slack_webhook_url: 'https://hooks.slack.com/services/x' },
      { name: 'x', event_type: 'task.created', id: randomUUID() },
      { name: 'x', event_type: 'task.created', org_id: randomUUID() },
      { name: 'x', event_type: 'task.created', unknown: 1 },
    ]) errorOf(await post(a.auth, bad), 400, 'VALIDATION_ERROR');
  });

  it('conditions may be any JSON object (spec 2.7), nested objects and arrays of objects included', async () => {
    const a = await newTenant(t.app);
    for (const conditions of [{ threshold: { hours: 24 } }, { filters: { priority: 'high' } }, { rules: [{ field: 'priority', value: 'high' }] }]) {
      const r = await post(a.auth, { name: 'shaped', event_type: 'task.overdue', conditions });
      expect(r.statusCode).toBe(201);
      expect(r.json().data.conditions).toEqual(conditions);
    }
  });

  it('conditions up to 64 KB; above, 413 PAYLOAD_TOO_LARGE with details.maxBytes', async () => {
    const a = await newTenant(t.app);
    expect((await post(a.auth, { name: 'big ok', event_type: 'task.created', conditions: { title: 'x'.repeat(60_000) } })).statusCode).toBe(201);
    const e = errorOf(await post(a.auth, { name: 'too big', event_type: 'task.created', conditions: { title: 'x'.repeat(66_000) } }), 413, 'PAYLOAD_TOO_LARGE');
    expect(e.details).toMatchObject({ field: 'conditions', maxBytes: 65536, limit: 65536 });
    expect((await t.app.inject({ method: 'GET', url: '/v1/alert-rules', headers: a.auth })).json().pagination.total).toBe(1);
  });

  it('an organization has at most 100 rules: past them 409 CONFLICT ALERT_RULE_LIMIT_REACHED, also under concurrent creations; other organizations unaffected', async () => {
    const a = await newTenant(t.app);
    const b = await newTenant(t.app);
    // 97 rules already (written directly: the bound is what is tested, not 97 requests).
    await t.platform.db.sys.exec(`INSERT INTO alert_rules (org_id, id, name, event_type, created_by)
      SELECT $1, gen_random_uuid(), 'rule ' || g, '*', $2 FROM generate_series(1, 97) g`, [a.orgId, a.userId]);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => post(a.auth, { name: `concurrent ${i}`, event_type: 'task.created' })));
    expect(answers.filter((r) => r.statusCode === 201)).toHaveLength(3);
    const refused = answers.filter((r) => r.statusCode !== 201);
    expect(refused).toHaveLength(7);
    for (const r of refused) expect(errorOf(r, 409, 'CONFLICT').details).toEqual({ code: 'ALERT_RULE_LIMIT_REACHED', limit: 100 });
    expect((await t.app.inject({ method: 'GET', url: '/v1/alert-rules', headers: a.auth })).json().pagination.total).toBe(100);
    expect((await post(b.auth, { name: 'mine', event_type: 'task.created' })).statusCode).toBe(201);
  });

  it('accepts email and push rules without SMTP or a push provider (their deliveries are recorded as failed)', async () => {
    const a = await newTenant(t.app);
    expect((await post(a.auth, { name: 'mail', event_type: 'task.created', channels: ['email'] })).statusCode).toBe(201);
    expect((await post(a.auth, { name: 'push', event_type: 'task.created', channels: ['in_app', 'push'] })).json().data.channels).toEqual(['in_app', 'push']);
  });

  it('needs alert_rule.manage (403 PERMISSION_DENIED for a member), the notifications scope for keys, and a credential', async () => {
    const a = await newTenant(t.app);
    const m = await memberOf(t.app, a, 'member');
    errorOf(await post(m.auth, { name: 'x', event_type: 'task.created' }), 403, 'PERMISSION_DENIED');
    const k = await a.apiKey(['notifications:read']);
    errorOf(await post(bearer(k), { name: 'x', event_type: 'task.created' }), 403, 'FORBIDDEN');
    const kw = await a.apiKey(['notifications:write']);
    expect((await post(bearer(kw), { name: 'x', event_type: 'task.created' })).statusCode).toBe(201);
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/alert-rules', payload: { name: 'x', event_type: 'task.created' } }), 401, 'AUTH_REQUIRED');
  });
});

describe('GET /v1/alert-rules', () => {
  it('lists the organization\'s rules newest first with pagination; never returns the webhook URL', async () => {
    const a = await newTenant(t.app);
    const b = await newTenant(t.app);
    for (let i = 0; i < 3; i++) await post(a.auth, { name: `r${i}`, event_type: 'task.created' });
    await post(a.auth, { name: 'slack', event_type: 'task.completed', channels: ['slack', 'in_app'], slack_webhook_url: 'https://hooks.slack.com/services/T1/B1/secret-part' });
    await post(b.auth, { name: 'other org', event_type: 'task.created' });
    const r = await t.app.inject({ method: 'GET', url: '/v1/alert-rules?limit=3', headers: a.auth });
    expect(r.statusCode).toBe(200);
    expect(r.json().pagination).toEqual({ total: 4, limit: 3, offset: 0, has_more: true });
    expect(r.json().data[0]).toMatchObject({ name: 'slack', channels: ['slack', 'in_app'], slack_webhook_configured: true });
    expect(r.body).not.toContain('secret-part');
    const r2 = await t.app.inject({ method: 'GET', url: '/v1/alert-rules?limit=3&offset=3', headers: a.auth });
    expect(r2.json().data.map((x: { name: string }) => x.name)).toEqual(['r0']);
    expect(r2.json().pagination.has_more).toBe(false);
    const m = await memberOf(t.app, a, 'viewer');
    expect((await t.app.inject({ method: 'GET', url: '/v1/alert-rules', headers: m.auth })).json().pagination.total).toBe(4);
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/alert-rules?limit=101', headers: a.auth }), 400, 'INVALID_PARAMETER');
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/alert-rules' }), 401, 'AUTH_REQUIRED');
  });
});

describe('PUT and DELETE /v1/alert-rules/{alertRuleId}', () => {
  it('answer 501 NOT_IMPLEMENTED for every rule the caller can see, whoever asks and whatever the body', async () => {
    const a = await newTenant(t.app);
    const id = (await post(a.auth, { name: 'x', event_type: 'task.created' })).json().data.id;
    const m = await memberOf(t.app, a, 'viewer');
    for (const method of ['PUT', 'DELETE'] as const) {
      for (const who of [a, m]) {
        errorOf(await t.app.inject({ method, url: `/v1/alert-rules/${id}`, headers: who.auth, payload: method === 'PUT' ? { name: 'y', anything: true } : undefined }), 501, 'NOT_IMPLEMENTED');
      }
    }
    expect((await t.app.inject({ method: 'GET', url: '/v1/alert-rules', headers: a.auth })).json().data[0].name).toBe('x');
  });

  it('answer 501 to a body that is not JSON, any content type, and a key without notifications:write', async () => {
    const a = await newTenant(t.app);
    const id = (await post(a.auth, { name: 'x', event_type: 'task.created' })).json().data.id;
    const readOnly = (await t.app.inject({ method: 'POST', url: '/v1/api-keys', headers: a.auth, payload: { name: 'ro', scopes: ['documents:read'], expires_at: new Date(Date.now() + 86_400_000).toISOString() } })).json().data.key;
    for (const method of ['PUT', 'DELETE'] as const) {
      for (const [type, payload] of [['application/json', 'not json'], ['application/json', '{"a":'], ['text/plain', 'hello'], ['application/octet-stream', Buffer.from([0, 1, 2])]] as const) {
        errorOf(await t.app.inject({ method, url: `/v1/alert-rules/${id}`, headers: { ...a.auth, 'content-type': type }, payload }), 501, 'NOT_IMPLEMENTED');
      }
      errorOf(await t.app.inject({ method, url: `/v1/alert-rules/${id}`, headers: { authorization: `Bearer ${readOnly}` } }), 501, 'NOT_IMPLEMENTED');
    }
  });

  it('401 without a credential; 501 for a rule of another organization exactly like a random id, and for any other id', async () => {
    const a = await newTenant(t.app);
    const b = await newTenant(t.app);
    const id = (await post(a.auth, { name: 'x', event_type: 'task.created' })).json().data.id;
    for (const method of ['PUT', 'DELETE'] as const) {
      errorOf(await t.app.inject({ method, url: `/v1/alert-rules/${id}` }), 401, 'AUTH_REQUIRED');
      const cross = errorOf(await t.app.inject({ method, url: `/v1/alert-rules/${id}`, headers: b.auth }), 501, 'NOT_IMPLEMENTED');
      const random = errorOf(await t.app.inject({ method, url: `/v1/alert-rules/${randomUUID()}`, headers: b.auth }), 501, 'NOT_IMPLEMENTED');
      expect({ ...cross, details: undefined }).toEqual({ ...random, details: undefined }); // only the request id differs
      errorOf(await t.app.inject({ method, url: '/v1/alert-rules/not-a-uuid', headers: a.auth }), 501, 'NOT_IMPLEMENTED'); // "always"
      for (const long of [300, 501, 8000]) errorOf(await t.app.inject({ method, url: `/v1/alert-rules/${'r'.repeat(long)}`, headers: a.auth }), 501, 'NOT_IMPLEMENTED'); // however long
    }
  });
});

describe('GET /v1/alert-rules/{alertRuleId}/deliveries', () => {
  it('lists deliveries of a rule; another organization gets the same 404 as a random id', async () => {
    const a = await newTenant(t.app);
    const b = await newTenant(t.app);
    const id = (await post(a.auth, { name: 'x', event_type: 'task.created' })).json().data.id;
    const r = await t.app.inject({ method: 'GET', url: `/v1/alert-rules/${id}/deliveries`, headers: a.auth });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ data: [], pagination: { total: 0, has_more: false } });
    const random = errorOf(await t.app.inject({ method: 'GET', url: `/v1/alert-rules/${randomUUID()}/deliveries`, headers: b.auth }), 404, 'NOT_FOUND');
    const cross = errorOf(await t.app.inject({ method: 'GET', url: `/v1/alert-rules/${id}/deliveries`, headers: b.auth }), 404, 'NOT_FOUND');
    expect(cross).toEqual(random);
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/alert-rules/nope/deliveries', headers: a.auth }), 400, 'INVALID_ID_FORMAT');
  });

  it('pagination.total stays the number of deliveries on a page past the end', async () => {
    const a = await newTenant(t.app);
    const id = (await post(a.auth, { name: 'x', event_type: 'project.created', channels: ['in_app'] })).json().data.id;
    for (let i = 0; i < 2; i++) {
      await handleWorkspaceEvent(t.platform, { type: 'project.created', orgId: a.orgId, actorUserId: a.userId, targetType: 'project', targetId: uuidv7(), data: { name: `P${i}` }, at: new Date().toISOString() });
    }
    const url = `/v1/alert-rules/${id}/deliveries`;
    expect((await t.app.inject({ method: 'GET', url, headers: a.auth })).json().pagination).toEqual({ total: 2, limit: 50, offset: 0, has_more: false });
    const past = await t.app.inject({ method: 'GET', url: `${url}?offset=10&limit=5`, headers: a.auth });
    expect(past.statusCode).toBe(200);
    expect(past.json()).toEqual({ success: true, data: [], pagination: { total: 2, limit: 5, offset: 10, has_more: false } });
  });
});

describe('delivery without SMTP', () => {
  it('an e-mail delivery is recorded as failed with the reason, never dropped', async () => {
    const a = await newTenant(t.app);
    // Created while SMTP was configured (it is not on this app): insert the rule as it would have been stored.
    const id = uuidv7();
    await t.platform.db.tenant(a.orgId, (sql) => sql.exec(`INSERT INTO alert_rules (org_id, id, name, event_type, channels, created_by) VALUES ($1, $2, 'mail', 'project.created', '{email,in_app}', $3)`, [a.orgId, id, a.userId]));
    await handleWorkspaceEvent(t.platform, { type: 'project.created', orgId: a.orgId, actorUserId: a.userId, targetType: 'project', targetId: uuidv7(), data: { name: 'P' }, at: new Date().toISOString() });
    const d = await waitFor(async () => {
      const x = (await t.app.inject({ method: 'GET', url: `/v1/alert-rules/${id}/deliveries`, headers: a.auth })).json().data as Array<{ channel: string; status: string; last_error: string | null }>;
      return x.length === 2 && x.every((y) => y.status !== 'pending' && y.status !== 'retrying') && x;
    });
    expect(d.find((x) => x.channel === 'email')).toMatchObject({ status: 'failed', last_error: expect.stringContaining('E-mail is not configured') });
    expect(d.find((x) => x.channel === 'in_app')).toMatchObject({ status: 'delivered' });
  });
});

describe('event-type catalogue', () => {
  it('is published in the OpenAPI document as the examples and description of event_type', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const body = doc.paths['/v1/alert-rules'].post.requestBody.content['application/json'].schema;
    const eventType = body.properties.event_type;
    expect(eventType.examples).toEqual([...EVENT_TYPES]);
    expect(eventType.examples).toEqual(expect.arrayContaining(['task.overdue', 'task.assigned', 'project.archived']));
    expect(eventType.description).toContain('task.overdue');
    expect(EVENT_TYPES.every((e) => /^[a-z_]+\.[a-z_]+$/.test(e))).toBe(true);
  });
});
