import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, errorOf, type TestApp, type Tenant } from '../../../../test/helpers.js';
import { SmtpSink } from '../../../adapters/smtp/smtp-sink.js';
import { WebhookServer } from '../../../adapters/slack/webhook-server.js';
import { createProject, createTask, memberOf, waitFor } from '../test-support.js';
import { scanOverdueTasks } from '../notifications/overdue.js';
import { handleWorkspaceEvent } from '../index.js';
import { uuidv7 } from '../../../core/ids.js';

let t: TestApp;
let sink: SmtpSink;
let hook: WebhookServer;
beforeAll(async () => {
  sink = await new SmtpSink().start();
  hook = await new WebhookServer().start();
  t = await buildTestApp({ smtpUrl: sink.url, smtpFrom: 'alerts@platform.test' });
});
afterAll(async () => { await t.close(); await sink.close(); await hook.close(); });

interface Delivery { id: string; channel: string; status: string; attempts: number; last_error: string | null; delivered_at: string | null }
const deliveries = async (owner: Tenant, ruleId: string): Promise<Delivery[]> =>
  (await t.app.inject({ method: 'GET', url: `/v1/alert-rules/${ruleId}/deliveries`, headers: owner.auth })).json().data;
const rule = async (owner: Tenant, body: Record<string, unknown>) => {
  const r = await t.app.inject({ method: 'POST', url: '/v1/alert-rules', headers: owner.auth, payload: body });
  if (r.statusCode !== 201) throw new Error(`rule: ${r.statusCode} ${r.body}`);
  return r.json().data.id as string;
};
/** Once the runner has put the org's failed delivery job back (pending, with backoff), makes it due now. */
const hurry = async (orgId: string) => {
  await waitFor(async () => (await t.platform.db.sys.exec(`UPDATE jobs SET run_at = now() WHERE org_id = $1 AND status = 'pending' AND kind LIKE 'alert.%'`, [orgId])) > 0);
  t.platform.jobs.poke();
};

describe('alert rules fire end to end', () => {
  it('task.assigned matching the conditions: in-app notification, e-mail at the SMTP sink, Slack webhook POST', async () => {
    const a = await newTenant(t.app);
    const m = await memberOf(t.app, a);
    const p = await createProject(t.app, a, 'Alerted project');
    const other = await createProject(t.app, a, 'Quiet project');
    const slackPath = `/services/T0/B0/${a.orgId}`;
    const ruleId = await rule(a, { name: 'Assignments in the alerted project', event_type: 'task.assigned', conditions: { project_id: p.id },
      channels: ['in_app', 'email', 'slack'], slack_webhook_url: hook.url(slackPath) });
    const mailsBefore = sink.messages.length;
    const taskId = await createTask(t.app, a, p.id, { title: 'Ship the release', assignee_id: m.userId });
    await createTask(t.app, a, other.id, { title: 'Not alerted', assignee_id: m.userId });

    const done = await waitFor(async () => { const d = await deliveries(a, ruleId); return d.length === 3 && d.every((x) => x.status === 'delivered') && d; });
    expect(done.map((d) => d.channel).sort()).toEqual(['email', 'in_app', 'slack']);
    expect(done.every((d) => d.attempts === 1 && d.last_error === null && d.delivered_at)).toBe(true);

    // in_app: a notification for the rule's creator, linked to the rule.
    const inbox = (await t.app.inject({ method: 'GET', url: '/v1/notifications', headers: a.auth })).json().data.notifications;
    expect(inbox).toHaveLength(1);
    expect(inbox[0]).toMatchObject({ event_type: 'task.assigned', alert_rule_id: ruleId, target_id: taskId, channel: 'in_app' });
    expect(inbox[0].title).toContain('Ship the release');
    // email: one message to the creator through real SMTP.
    const mail = (await sink.waitFor(mailsBefore + 1)).slice(mailsBefore).find((x) => x.to.includes(a.email))!;
    expect(mail.from).toBe('alerts@platform.test');
    expect(mail.data).toContain('Assignments in the alerted project');
    expect(mail.data).toContain('Ship the release');
    // slack: one JSON POST {text} to the webhook.
    const posts = hook.received.filter((x) => x.path === slackPath);
    expect(posts).toHaveLength(1);
    expect((posts[0].body as { text: string }).text).toContain('Ship the release');
    // The assignee still gets the platform's own notification; the non-matching task caused no delivery.
    expect((await t.app.inject({ method: 'GET', url: '/v1/notifications', headers: m.auth })).json().pagination.total).toBe(2);
    expect(await deliveries(a, ruleId)).toHaveLength(3);
  });

  it('task.overdue found by the periodic job fires a rule', async () => {
    const a = await newTenant(t.app);
    const p = await createProject(t.app, a);
    const ruleId = await rule(a, { name: 'Overdue', trigger_type: 'task.overdue', conditions: { title: { $contains: 'late' } } });
    await createTask(t.app, a, p.id, { title: 'very late task', due_date: new Date(Date.now() - 60_000).toISOString() });
    await createTask(t.app, a, p.id, { title: 'also overdue but not matching', due_date: new Date(Date.now() - 60_000).toISOString() });
    await scanOverdueTasks(t.platform);
    const d = await waitFor(async () => { const x = await deliveries(a, ruleId); return x[0]?.status === 'delivered' && x; });
    expect(d).toHaveLength(1);
    const n = (await t.app.inject({ method: 'GET', url: '/v1/notifications?notification_type=warning', headers: a.auth })).json().data.notifications;
    expect(n).toEqual([expect.objectContaining({ event_type: 'task.overdue', alert_rule_id: ruleId })]);
  });

  it('a failing Slack webhook is retried with backoff; every attempt is recorded, then the delivery fails for good', async () => {
    const a = await newTenant(t.app);
    const path = `/services/fail/${a.orgId}`;
    const ruleId = await rule(a, { name: 'Slack down', event_type: 'project.created', channels: ['slack'], slack_webhook_url: hook.url(path) });
    hook.failCount = -1;
    try {
      await createProject(t.app, a, 'Triggers the rule');
      const first = await waitFor(async () => { const d = (await deliveries(a, ruleId))[0]; return d?.attempts === 1 && d; });
      expect(first).toMatchObject({ channel: 'slack', status: 'retrying' });
      expect(first.last_error).toContain('HTTP 500');
      // The runner puts the job back as pending, due later: backoff, not a hot loop.
      const job = await waitFor(() => t.platform.db.sys.one<{ run_at: string; status: string; now: string }>(
        `SELECT run_at, status, now() AS now FROM jobs WHERE org_id = $1 AND kind = 'alert.deliver' AND status = 'pending'`, [a.orgId]));
      expect(Date.parse(job.run_at)).toBeGreaterThan(Date.parse(job.now));
      for (let attempt = 2; attempt <= 5; attempt++) {
        await hurry(a.orgId);
        await waitFor(async () => (await deliveries(a, ruleId))[0]?.attempts === attempt);
      }
      const last = await waitFor(async () => { const d = (await deliveries(a, ruleId))[0]; return d.status === 'failed' && d; });
      expect(last.attempts).toBe(5);
      expect(last.last_error).toContain('HTTP 500');
      const attempts = await t.platform.db.sys.query<{ attempt: number; outcome: string }>(`SELECT attempt, outcome FROM alert_delivery_attempts WHERE org_id = $1 ORDER BY attempt`, [a.orgId]);
      expect(attempts).toEqual([1, 2, 3, 4, 5].map((n) => ({ attempt: n, outcome: 'failed' })));
      expect(hook.received.filter((x) => x.path === path)).toHaveLength(5);
      await waitFor(async () => (await t.platform.db.sys.one<{ status: string }>(`SELECT status FROM jobs WHERE org_id = $1 AND kind = 'alert.deliver'`, [a.orgId]))?.status === 'failed');
    } finally { hook.failCount = 0; }
  });

  it('a webhook that recovers is delivered on a retry', async () => {
    const a = await newTenant(t.app);
    const path = `/services/flaky/${a.orgId}`;
    const ruleId = await rule(a, { name: 'Slack flaky', event_type: 'project.created', channels: ['slack'], slack_webhook_url: hook.url(path) });
    hook.failCount = 1;
    await createProject(t.app, a, 'Flaky trigger');
    await waitFor(async () => (await deliveries(a, ruleId))[0]?.status === 'retrying');
    await hurry(a.orgId);
    const d = await waitFor(async () => { const x = (await deliveries(a, ruleId))[0]; return x?.status === 'delivered' && x; });
    expect(d.attempts).toBe(2);
    const attempts = await t.platform.db.sys.query<{ outcome: string }>(`SELECT outcome FROM alert_delivery_attempts WHERE org_id = $1 ORDER BY attempt`, [a.orgId]);
    expect(attempts.map((x) => x.outcome)).toEqual(['failed', 'delivered']);
  });

  it('a disabled rule does not fire; a channel this deployment cannot deliver is recorded as failed with the reason', async () => {
    const a = await newTenant(t.app);
    const off = await rule(a, { name: 'off', event_type: 'project.archived', is_enabled: false });
    // No push provider exists: the rule's deliveries are recorded as failed with the reason, not dropped.
    const push = uuidv7();
    await t.platform.db.tenant(a.orgId, (sql) => sql.exec(`INSERT INTO alert_rules (org_id, id, name, event_type, channels, created_by) VALUES ($1, $2, 'push', 'project.archived', '{push}', $3)`, [a.orgId, push, a.userId]));
    await handleWorkspaceEvent(t.platform, { type: 'project.archived', orgId: a.orgId, actorUserId: a.userId, targetType: 'project', targetId: uuidv7(), data: { name: 'P' }, at: new Date().toISOString() });
    t.platform.jobs.poke();
    const d = await waitFor(async () => { const x = (await deliveries(a, push))[0]; return x?.status === 'failed' && x; });
    expect(d.last_error).toContain('push');
    expect(await deliveries(a, off)).toEqual([]);
  });

  it('creating an e-mail rule works when SMTP is configured', async () => {
    const a = await newTenant(t.app);
    const r = await t.app.inject({ method: 'POST', url: '/v1/alert-rules', headers: a.auth, payload: { name: 'mail', event_type: 'task.completed', channels: ['email'] } });
    expect(r.statusCode).toBe(201);
  });
});
