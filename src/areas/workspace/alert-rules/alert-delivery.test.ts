import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, type TestApp, type Tenant } from '../../../../test/helpers.js';
import { SmtpSink } from '../../../adapters/smtp/smtp-sink.js';
import { WebhookServer } from '../../../adapters/slack/webhook-server.js';
import { createProject, createTask, memberOf, waitFor } from '../test-support.js';
import { scanOverdueTasks } from '../notifications/overdue.js';
import { handleWorkspaceEvent } from '../index.js';
import { uuidv7 } from '../../../core/ids.js';
import type { PlatformEvent } from '../../../core/events.js';
import { EMAIL_DELIVERY_JOB, queueAlertDeliveries } from './dispatch.js';
import { deliveryHandler } from './delivery.js';

/**
 * The relay the app is configured with: a TCP front on 127.0.0.1 that passes each connection through to the
 * SMTP sink, unless `faults` holds a fault for the next connection: 'drop' closes it right after the greeting,
 * 'reject-rcpt' answers the dialogue itself and refuses the recipient with 550 (never reaching the sink).
 * (Lives here, not in the shared SmtpSink: only this file needs these faults.)
 */
type SmtpFault = 'drop' | 'reject-rcpt';
class SmtpFront {
  faults: SmtpFault[] = [];
  /** When set, every connection gets this fault (the relay is down for good). */
  always: SmtpFault | null = null;
  connections = 0;
  port = 0;
  private sockets = new Set<net.Socket>();
  private server = net.createServer((c) => {
    this.connections++;
    this.sockets.add(c);
    c.on('close', () => this.sockets.delete(c));
    c.on('error', () => {});
    const fault = this.always ?? this.faults.shift();
    if (fault === 'drop') { c.end('220 127.0.0.1 ESMTP front\r\n'); setTimeout(() => c.destroy(), 20); return; }
    if (fault === 'reject-rcpt') { this.rejectRcpt(c); return; }
    const up = net.connect(this.target.port, '127.0.0.1');
    up.on('error', () => c.destroy());
    c.on('close', () => up.destroy());
    c.pipe(up).pipe(c);
  });
  constructor(private readonly target: { port: number }) {}
  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }
  get url(): string { return `smtp://sink:secret@127.0.0.1:${this.port}`; }
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
  private rejectRcpt(c: net.Socket): void {
    c.setEncoding('utf8');
    const say = (l: string) => c.write(l + '\r\n');
    let buf = '';
    say('220 127.0.0.1 ESMTP front');
    c.on('data', (chunk: string) => {
      buf += chunk;
      for (let nl = buf.indexOf('\r\n'); nl >= 0; nl = buf.indexOf('\r\n')) {
        const verb = buf.slice(0, 4).toUpperCase();
        buf = buf.slice(nl + 2);
        if (verb === 'EHLO') c.write('250-127.0.0.1\r\n250 AUTH PLAIN\r\n');
        else if (verb === 'HELO') say('250 127.0.0.1');
        else if (verb === 'AUTH') say('235 2.7.0 Authentication successful');
        else if (verb === 'MAIL' || verb === 'RSET' || verb === 'NOOP') say('250 2.0.0 OK');
        else if (verb === 'RCPT') say('550 5.1.1 Recipient address rejected (test)');
        else if (verb === 'QUIT') { say('221 2.0.0 Bye'); c.end(); }
        else say('503 5.5.1 Bad sequence of commands');
      }
    });
  }
}

let t: TestApp;
let sink: SmtpSink;
let front: SmtpFront;
let hook: WebhookServer;
beforeAll(async () => {
  sink = await new SmtpSink().start();
  front = await new SmtpFront(sink).start();
  hook = await new WebhookServer().start();
  t = await buildTestApp({ smtpUrl: front.url, smtpFrom: 'alerts@platform.test' });
});
afterAll(async () => { await t.close(); await front.close(); await sink.close(); await hook.close(); });

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
  it('a rule on task.mentioned tells its creator that members were mentioned, not that they were', async () => {
    const a = await newTenant(t.app);
    const m = await memberOf(t.app, a);
    const p = await createProject(t.app, a, 'Mentions project');
    const ruleId = await rule(a, { name: 'Mentions', event_type: 'task.mentioned', channels: ['in_app'] });
    await createTask(t.app, a, p.id, { title: 'Look here', description: `@${m.email} please` });
    await waitFor(async () => { const d = await deliveries(a, ruleId); return d.length === 1 && d[0].status === 'delivered'; });
    const inbox = (await t.app.inject({ method: 'GET', url: '/v1/notifications', headers: a.auth })).json().data.notifications;
    expect(inbox.map((n: { title: string }) => n.title)).toEqual(['Mentions: Members were mentioned in task "Look here"']);
  });

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

  it('a rule naming its type with other separators or case (spec 6: "a task-overdue kind") hears that type', async () => {
    const a = await newTenant(t.app);
    const p = await createProject(t.app, a);
    const hyphen = await rule(a, { name: 'Hyphen', event_type: 'task-overdue' });
    const upper = await rule(a, { name: 'Upper', trigger_type: 'TASK_OVERDUE' });
    const changed = await rule(a, { name: 'Status', event_type: 'task_status_changed' });
    const other = await rule(a, { name: 'Other type', event_type: 'task-overdue-soon' });
    const taskId = await createTask(t.app, a, p.id, { title: 'late', due_date: new Date(Date.now() - 60_000).toISOString() });
    await scanOverdueTasks(t.platform);
    for (const id of [hyphen, upper]) await waitFor(async () => (await deliveries(a, id))[0]?.status === 'delivered');
    expect((await t.app.inject({ method: 'PUT', url: `/v1/tasks/${taskId}`, headers: a.auth, payload: { status: 'in_progress' } })).statusCode).toBe(200);
    await waitFor(async () => (await deliveries(a, changed))[0]?.status === 'delivered');
    expect(await deliveries(a, other)).toEqual([]);
    const n = (await t.app.inject({ method: 'GET', url: '/v1/notifications', headers: a.auth })).json().data.notifications as Array<{ event_type: string; alert_rule_id: string }>;
    expect(n.map((x) => [x.alert_rule_id, x.event_type]).sort()).toEqual([[hyphen, 'task.overdue'], [upper, 'task.overdue'], [changed, 'task.status_changed']].sort());
  });

  it('a slack rule without a webhook URL is accepted (slack_webhook_configured: false); its Slack deliveries fail at once with the reason, in-app ones go out', async () => {
    const a = await newTenant(t.app);
    const created = await t.app.inject({ method: 'POST', url: '/v1/alert-rules', headers: a.auth, payload: { name: 'No hook', event_type: 'project.created', channels: ['slack', 'in_app'] } });
    expect(created.statusCode).toBe(201);
    expect(created.json().data).toMatchObject({ channels: ['slack', 'in_app'], slack_webhook_configured: false });
    await createProject(t.app, a, 'Triggers the hookless rule');
    const done = await waitFor(async () => { const d = await deliveries(a, created.json().data.id); return d.length === 2 && d.every((x) => x.status !== 'pending' && x.status !== 'retrying') && d; });
    const byChannel = Object.fromEntries(done.map((d) => [d.channel, d]));
    expect(byChannel.in_app.status).toBe('delivered');
    expect(byChannel.slack).toMatchObject({ status: 'failed', attempts: 1 });
    expect(byChannel.slack.last_error).toContain('The rule has no Slack webhook URL');
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

  it('a rule without an event type fires for every catalogue event its conditions hold for, never for internal events', async () => {
    const a = await newTenant(t.app);
    const p = await createProject(t.app, a, 'Watched project');
    const other = await createProject(t.app, a, 'Unwatched project');
    const ruleId = await rule(a, { name: 'Anything in the watched project', conditions: { project_id: p.id } });
    const taskId = await createTask(t.app, a, p.id, { title: 'Watched task' });
    await createTask(t.app, a, other.id, { title: 'Unwatched task' });
    const del = await t.app.inject({ method: 'DELETE', url: `/v1/tasks/${taskId}`, headers: a.auth });
    expect(del.statusCode).toBe(200);
    // An event outside the catalogue (the bus carries internal ones) is not delivered to a `*` rule.
    await handleWorkspaceEvent(t.platform, { type: 'internal.cache_flushed', orgId: a.orgId, actorUserId: a.userId, targetType: 'project', targetId: p.id, data: { project_id: p.id }, at: new Date().toISOString() });
    const inbox = await waitFor(async () => {
      const n = (await t.app.inject({ method: 'GET', url: '/v1/notifications', headers: a.auth })).json().data.notifications as Array<{ event_type: string; alert_rule_id: string }>;
      return n.length >= 2 && n;
    });
    expect(inbox.every((n) => n.alert_rule_id === ruleId)).toBe(true);
    expect(inbox.map((n) => n.event_type).sort()).toEqual(['task.created', 'task.deleted']);
    const d = await deliveries(a, ruleId);
    expect(d).toHaveLength(2);
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

  it('a removed member\'s rules stop: no delivery is queued for them, and one queued before the removal fails without sending', async () => {
    const a = await newTenant(t.app);
    const m = await memberOf(t.app, a, 'admin');
    const slackPath = `/services/T0/B1/${a.orgId}`;
    const ruleId = await rule({ ...a, auth: m.auth }, { name: 'Mine', event_type: 'project.created', channels: ['in_app', 'slack'], slack_webhook_url: hook.url(slackPath) });
    const event = (): PlatformEvent => ({ type: 'project.created', orgId: a.orgId, actorUserId: a.userId, targetType: 'project', targetId: uuidv7(), data: { name: 'P' }, at: new Date().toISOString() });
    // Queued while the creator is a member (the job runner may not take it before the removal: its transaction holds it).
    let queuedBefore = 0;
    await t.platform.db.tenantTx(a.orgId, async (sql) => {
      queuedBefore = await queueAlertDeliveries(sql, event(), { emailConfigured: false });
      const removed = await t.app.inject({ method: 'DELETE', url: `/v1/organizations/current/members/${m.userId}`, headers: a.auth });
      expect(removed.statusCode).toBe(200);
    });
    expect(queuedBefore).toBe(2);
    t.platform.jobs.poke();
    const done = await waitFor(async () => { const d = await deliveries(a, ruleId); return d.length === 2 && d.every((x) => x.status === 'failed') && d; });
    expect(done.map((d) => d.last_error)).toEqual([expect.stringContaining('no longer a member'), expect.stringContaining('no longer a member')]);
    expect(hook.received.filter((x) => x.path === slackPath)).toEqual([]);
    // After the removal the rule matches nothing.
    expect(await t.platform.db.tenantTx(a.orgId, (sql) => queueAlertDeliveries(sql, event(), { emailConfigured: false }))).toBe(0);
    expect(await deliveries(a, ruleId)).toHaveLength(2);
  });

  describe('e-mail through a failing SMTP relay', () => {
    /*
     * Every test file's app runs a job runner on the one shared test database, and any app with SMTP configured
     * (password-reset.test.ts's, say) claims `alert.deliver.email` jobs of every org and sends them to its own
     * sink, past this file's faults. So these tests queue the delivery with the real queueAlertDeliveries and,
     * in the same transaction, route its job to a kind only this process's runner handles (same handler, same
     * runner, same retry policy): no other file can take an attempt.
     */
    const OWN_EMAIL_JOB = `${EMAIL_DELIVERY_JOB}.only-${uuidv7()}`;
    beforeAll(() => { t.platform.jobs.register(OWN_EMAIL_JOB, deliveryHandler(t.platform)); });
    /** A project.created event for `owner`'s org, turned into deliveries as handleWorkspaceEvent does. */
    const fire = async (owner: Tenant, name: string) => {
      const event: PlatformEvent = { type: 'project.created', orgId: owner.orgId, actorUserId: owner.userId, targetType: 'project', targetId: uuidv7(), data: { name }, at: new Date().toISOString() };
      const queued = await t.platform.db.tenantTx(owner.orgId, async (sql) => {
        const n = await queueAlertDeliveries(sql, event, { emailConfigured: true });
        await sql.exec(`UPDATE jobs SET kind = $3 WHERE org_id = $1 AND kind = $2`, [owner.orgId, EMAIL_DELIVERY_JOB, OWN_EMAIL_JOB]);
        return n;
      });
      expect(queued).toBe(1);
      t.platform.jobs.poke();
    };
    interface JobRow { status: string; attempts: number; max_attempts: number; last_error: string | null; backoff_s: number; due_later: boolean }
    interface AttemptRow { attempt: number; outcome: string; error: string | null }
    /** The org's one e-mail delivery job, once the runner has finished with attempt `n` (put back pending, or finished). */
    const emailJobAfter = (orgId: string, n: number, status = 'pending') => waitFor(async () => {
      const j = await t.platform.db.sys.one<JobRow>(`SELECT status, attempts, max_attempts, last_error,
          extract(epoch FROM run_at - updated_at)::int AS backoff_s, run_at > now() AS due_later
        FROM jobs WHERE org_id = $1 AND kind = $2`, [orgId, OWN_EMAIL_JOB]);
      return j?.attempts === n && j.status === status && j;
    });
    const attemptsOf = (orgId: string) => t.platform.db.sys.query<AttemptRow>(
      `SELECT attempt, outcome, error FROM alert_delivery_attempts WHERE org_id = $1 ORDER BY attempt`, [orgId]);
    /** The delivery row, read straight from the table: it must exist at every step. */
    const rowOf = async (orgId: string) => {
      const rows = await t.platform.db.sys.query<{ status: string; attempts: number; last_error: string | null }>(
        `SELECT status, attempts, last_error FROM alert_deliveries WHERE org_id = $1`, [orgId]);
      expect(rows).toHaveLength(1);
      return rows[0];
    };
    const afterAttempt = (owner: Tenant, ruleId: string, n: number) =>
      waitFor(async () => { const d = (await deliveries(owner, ruleId))[0]; return d?.attempts === n && d.status !== 'pending' && d; });
    const mailsTo = (email: string) => sink.messages.filter((m) => m.to.includes(email));

    it('a relay answering DATA with 451 is retried with backoff, every failed attempt recorded with its error; when it recovers the mail is delivered', async () => {
      const a = await newTenant(t.app);
      const ruleId = await rule(a, { name: 'Mail relay flaky', event_type: 'project.created', channels: ['email'] });
      sink.failNext = 2;
      try {
        await fire(a, 'Mail trigger');
        for (const n of [1, 2]) {
          const d = await afterAttempt(a, ruleId, n);
          expect(d).toMatchObject({ channel: 'email', status: 'retrying', delivered_at: null });
          expect(d.last_error).toContain('451');
          expect(await rowOf(a.orgId)).toMatchObject({ status: 'retrying', attempts: n });
          // The job went back to pending, due 2^n s later: backoff per the retry policy, not a hot loop.
          const job = await emailJobAfter(a.orgId, n);
          expect(job).toMatchObject({ max_attempts: 5, backoff_s: 2 ** n, due_later: true });
          expect(job.last_error).toContain('451');
          const rows = await attemptsOf(a.orgId);
          expect(rows.map((r) => [r.attempt, r.outcome])).toEqual(Array.from({ length: n }, (_, i) => [i + 1, 'failed']));
          expect(rows.every((r) => r.error?.includes('451 4.3.0'))).toBe(true);
          expect(mailsTo(a.email)).toHaveLength(0);
          await hurry(a.orgId);
        }
        // Third attempt: the relay accepts.
        const d = await waitFor(async () => { const x = (await deliveries(a, ruleId))[0]; return x?.status === 'delivered' && x; });
        expect(d).toMatchObject({ attempts: 3, last_error: null });
        expect(d.delivered_at).toBeTruthy();
        const rows = await attemptsOf(a.orgId);
        expect(rows.map((r) => [r.attempt, r.outcome, r.error === null])).toEqual([[1, 'failed', false], [2, 'failed', false], [3, 'delivered', true]]);
        expect(sink.failNext).toBe(0);
        const mail = mailsTo(a.email);
        expect(mail).toHaveLength(1);
        expect(mail[0].data).toContain('Mail relay flaky');
        expect(mail[0].data).toContain('Mail trigger');
        expect((await emailJobAfter(a.orgId, 3, 'done')).last_error).toBeNull();
      } finally { sink.failNext = 0; }
    });

    it('a relay that refuses the recipient (550), then drops the connection, is retried; each error is recorded; fixed, it delivers', async () => {
      const a = await newTenant(t.app);
      const ruleId = await rule(a, { name: 'Mail relay broken', event_type: 'project.created', channels: ['email'] });
      front.faults = ['reject-rcpt', 'drop'];
      try {
        await fire(a, 'Broken relay trigger');
        const first = await afterAttempt(a, ruleId, 1);
        expect(first.status).toBe('retrying');
        expect(first.last_error).toContain('550 5.1.1');
        await emailJobAfter(a.orgId, 1);
        await hurry(a.orgId);
        const second = await afterAttempt(a, ruleId, 2);
        expect(second.status).toBe('retrying');
        expect(second.last_error).toMatch(/connection closed/i);
        expect(await rowOf(a.orgId)).toMatchObject({ status: 'retrying', attempts: 2 });
        expect((await emailJobAfter(a.orgId, 2)).backoff_s).toBe(4);
        expect(front.faults).toEqual([]);
        await hurry(a.orgId);
        const d = await waitFor(async () => { const x = (await deliveries(a, ruleId))[0]; return x?.status === 'delivered' && x; });
        expect(d).toMatchObject({ attempts: 3, last_error: null });
        const rows = await attemptsOf(a.orgId);
        expect(rows.map((r) => r.outcome)).toEqual(['failed', 'failed', 'delivered']);
        expect(rows[0].error).toContain('550 5.1.1');
        expect(rows[1].error).toBe(second.last_error);
        expect(mailsTo(a.email)).toHaveLength(1);
      } finally { front.faults = []; }
    });

    it('a relay that stays down: five attempts, each recorded, then the delivery fails for good (kept, with the last error)', async () => {
      const a = await newTenant(t.app);
      const ruleId = await rule(a, { name: 'Mail relay down', event_type: 'project.created', channels: ['email'] });
      front.always = 'drop';
      try {
        await fire(a, 'Down relay trigger');
        for (let n = 1; n <= 4; n++) {
          expect((await afterAttempt(a, ruleId, n)).status).toBe('retrying');
          await rowOf(a.orgId);
          await emailJobAfter(a.orgId, n);
          await hurry(a.orgId);
        }
        const last = await waitFor(async () => { const x = (await deliveries(a, ruleId))[0]; return x?.status === 'failed' && x; });
        expect(last.attempts).toBe(5);
        expect(last.last_error).toMatch(/connection closed/i);
        expect(last.delivered_at).toBeNull();
        const rows = await attemptsOf(a.orgId);
        expect(rows.map((r) => [r.attempt, r.outcome])).toEqual([1, 2, 3, 4, 5].map((n) => [n, 'failed']));
        expect(rows.every((r) => /connection closed/i.test(r.error ?? ''))).toBe(true);
        const job = await emailJobAfter(a.orgId, 5, 'failed');
        expect(job.last_error).toBeTruthy();
        expect(await rowOf(a.orgId)).toMatchObject({ status: 'failed', attempts: 5 });
        expect(mailsTo(a.email)).toHaveLength(0);
      } finally { front.always = null; }
    });
  });

  it('creating an e-mail rule works when SMTP is configured', async () => {
    const a = await newTenant(t.app);
    const r = await t.app.inject({ method: 'POST', url: '/v1/alert-rules', headers: a.auth, payload: { name: 'mail', event_type: 'task.completed', channels: ['email'] } });
    expect(r.statusCode).toBe(201);
  });
});
