import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Database } from '../../../core/db/database.js';
import type { ChannelSubscriber } from '../../../core/db/listener.js';
import { buildTestApp, newTenant, type TestApp } from '../../../../test/helpers.js';
import { uuidv7 } from '../../../core/ids.js';
import { waitFor } from '../test-support.js';
import type { NotifiedOrgCache } from '../../../core/db/notified-cache.js';
import { ALERT_RULES_CHANNEL, EnabledRuleTypes, enabledRuleTypes } from './enabled-rule-types.js';

/** A Database stand-in: a listener whose liveness the test sets, and a rules read that counts and can be held open. */
function stubDb(types: string[]) {
  let subscriber!: ChannelSubscriber;
  const s = {
    live: true, reads: 0, types, hold: null as Promise<void> | null,
    notify: (payload: string) => subscriber.notify(payload),
    db: {
      listener: { isLive: () => s.live, subscribe: (_c: string, sub: ChannelSubscriber) => { subscriber = sub; return () => {}; } },
      tenant: async () => { s.reads++; const seen = [...s.types]; if (s.hold) await s.hold; return seen; },
    } as unknown as Database,
  };
  return s;
}

describe('EnabledRuleTypes (in-memory, stub database)', () => {
  it('a rule type written with other separators or case matches the type the platform emits (task-overdue: task.overdue)', async () => {
    const c = new EnabledRuleTypes(stubDb(['task-overdue', 'TASK_STATUS_CHANGED']).db);
    expect(await c.has('org-a', 'task.overdue')).toBe(true);
    expect(await c.has('org-a', 'task.status_changed')).toBe(true);
    expect(await c.has('org-a', 'task.created')).toBe(false);
  });

  it('reads an organization once, then answers from memory until a change is announced for it', async () => {
    const s = stubDb(['task.assigned']);
    const c = new EnabledRuleTypes(s.db);
    expect(await c.has('org-a', 'task.created')).toBe(false);
    expect(await c.has('org-a', 'task.assigned')).toBe(true);
    expect(s.reads).toBe(1);
    s.types = ['task.created'];
    expect(await c.has('org-a', 'task.created')).toBe(false); // not announced yet: the memory still answers
    s.notify('org-b');
    expect(await c.has('org-a', 'task.created')).toBe(false);
    s.notify('org-a');
    expect(await c.has('org-a', 'task.created')).toBe(true);
    expect(s.reads).toBe(2);
    s.types = [];
    s.notify('*');
    expect(await c.has('org-a', 'task.created')).toBe(false);
    expect(s.reads).toBe(3);
  });

  it('neither uses nor keeps entries while the listener is not live', async () => {
    const s = stubDb(['task.created']);
    const c = new EnabledRuleTypes(s.db);
    await c.has('org-a', 'task.created');
    s.live = false;
    s.types = [];
    expect(await c.has('org-a', 'task.created')).toBe(false);
    expect(await c.has('org-a', 'task.created')).toBe(false);
    expect(s.reads).toBe(3);
    s.live = true;
    s.types = ['task.created'];
    expect(await c.has('org-a', 'task.created')).toBe(true); // the entry read before the outage was not trusted
  });

  it('does not keep a read that raced with an announcement', async () => {
    const s = stubDb([]);
    const c = new EnabledRuleTypes(s.db);
    let release!: () => void;
    s.hold = new Promise((r) => { release = r; });
    const racing = c.has('org-a', 'task.created'); // reads "no rules", then a rule is created before it returns
    s.types = ['task.created'];
    s.notify('org-a');
    release();
    expect(await racing).toBe(false);
    s.hold = null;
    expect(await c.has('org-a', 'task.created')).toBe(true);
    expect(s.reads).toBe(2);
  });
});

describe('EnabledRuleTypes on PostgreSQL (LISTEN/NOTIFY)', () => {
  let t: TestApp;
  beforeAll(async () => { t = await buildTestApp(); });
  afterAll(async () => { await t.close(); });

  const insertRule = (orgId: string, eventType: string, announce: boolean) => t.platform.db.systemTx(async (sql) => {
    // Without the trigger (replica role): a change nobody announces, to prove the memory is what answers.
    if (!announce) await sql.exec(`SET LOCAL session_replication_role = replica`);
    await sql.exec(`INSERT INTO alert_rules (org_id, id, name, event_type, conditions, channels, is_enabled)
      VALUES ($1, $2, 'r', $3, '{}', ARRAY['in_app'], true)`, [orgId, uuidv7(), eventType]);
  });

  /** A new organization whose (empty) entry the live cache now holds. */
  async function cachedNewOrg(eventType: string) {
    const a = await newTenant(t.app);
    const cache = enabledRuleTypes(t.platform.db);
    await waitFor(async () => t.platform.db.listener.isLive(ALERT_RULES_CHANNEL));
    expect(await cache.has(a.orgId, eventType)).toBe(false);
    return { a, cache };
  }

  it('a rule created by another process is seen once its announcement arrives, without a read per event before it', async () => {
    const { a, cache } = await cachedNewOrg('task.created');
    await insertRule(a.orgId, 'task.created', false);
    expect(await cache.has(a.orgId, 'task.created')).toBe(false);
    await insertRule(a.orgId, 'task.updated', true);
    await waitFor(() => cache.has(a.orgId, 'task.created'), 5_000, 10);
    expect(await cache.has(a.orgId, 'task.updated')).toBe(true);
  });

  it('a rule created through the API is seen by the very next event of this process: forgotten at once, not only when announced', async () => {
    const { a, cache } = await cachedNewOrg('project.archived');
    // The memory itself (core NotifiedOrgCache), which both the service and the announcement tell to forget.
    const forget = vi.spyOn((cache as unknown as { cache: NotifiedOrgCache<unknown> }).cache, 'forget');
    try {
      const r = await t.app.inject({ method: 'POST', url: '/v1/alert-rules', headers: a.auth, payload: { name: 'n', event_type: 'project.archived' } });
      expect(r.statusCode).toBe(201);
      expect(await cache.has(a.orgId, 'project.archived')).toBe(true);
      // Once by the service after its commit, once more when the trigger's announcement arrives.
      await waitFor(async () => forget.mock.calls.filter(([org]) => org === a.orgId).length >= 2, 5_000, 10);
    } finally { forget.mockRestore(); }
  });

  it('after the listener connection is killed, answers come from the database until it is back, then from memory again', async () => {
    const { a, cache } = await cachedNewOrg('task.created');
    const killed = await t.platform.db.sys.one<{ ok: boolean }>(`SELECT pg_terminate_backend($1) AS ok`, [t.platform.db.listener.backendPid]);
    expect(killed!.ok).toBe(true);
    await waitFor(async () => !t.platform.db.listener.isLive(ALERT_RULES_CHANNEL), 5_000, 5);
    await insertRule(a.orgId, 'task.created', false);
    expect(await cache.has(a.orgId, 'task.created')).toBe(true); // read, not remembered
    await waitFor(async () => t.platform.db.listener.isLive(ALERT_RULES_CHANNEL), 10_000, 20);
    expect(await cache.has(a.orgId, 'task.created')).toBe(true);
    await insertRule(a.orgId, 'task.updated', false);
    expect(await cache.has(a.orgId, 'task.updated')).toBe(false); // live again: the memory answers
  });
});
