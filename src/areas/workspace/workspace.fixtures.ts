import type { Fixture } from '../../../test/fixtures.js';
import { notificationsRepo } from './notifications/notifications.repo.js';

/** Fixtures of the workspace's id routes (route-wide safety tests): each creates the resource as `owner`. */
export const workspaceFixtures: Record<string, Fixture> = {
  async saved_view(app, owner) {
    const r = await app.inject({ method: 'POST', url: '/v1/settings/views', headers: owner.auth, payload: { name: 'fixture', resource: 'tasks', filters: { status: 'todo' } } });
    return { viewId: r.json().data.id };
  },
  async org_setting(app, owner) {
    const key = `fixture_${Date.now()}`;
    await app.inject({ method: 'PUT', url: '/v1/settings/org', headers: owner.auth, payload: { settings: { [key]: true } } });
    return { key };
  },
  async preference(app, owner) {
    const key = `fixture_${Date.now()}`;
    await app.inject({ method: 'PUT', url: '/v1/settings/preferences', headers: owner.auth, payload: { preferences: { [key]: 1 } } });
    return { key };
  },
  async notification(app, owner) {
    // Notifications have no create route (the platform makes them); make one as the platform would.
    const n = await app.platform.db.tenant(owner.orgId, (sql) => notificationsRepo.insert(sql, owner.orgId, { userId: owner.userId, title: 'fixture' }));
    return { id: n.id };
  },
  async alert_rule(app, owner) {
    const r = await app.inject({ method: 'POST', url: '/v1/alert-rules', headers: owner.auth, payload: { name: 'fixture', event_type: 'task.overdue' } });
    return { alertRuleId: r.json().data.id };
  },
};
