import { defineTools, listResult } from './define.js';
import * as settings from '../../../areas/workspace/settings/settings.service.js';
import * as views from '../../../areas/workspace/settings/views.service.js';
import * as alerts from '../../../areas/workspace/alert-rules/alert-rules.service.js';
import type { CreateViewInput } from '../../../areas/workspace/settings/settings.schemas.js';
import type { CreateAlertRuleInput } from '../../../areas/workspace/alert-rules/alert-rules.schemas.js';

const page = (a: Record<string, any>) => ({ limit: a.limit as number, offset: a.offset as number });

// Settings, saved views and alert rules of the workspace area. Lives here until the area owns its tools file.
export const workspaceTools = defineTools([
  {
    name: 'settings.org.get', title: 'Organization settings', access: 'read', route: 'GET /v1/settings/org',
    description: 'The organization settings document (key-value JSON).',
    keywords: ['configuration', 'config', 'options'],
    run: (ctx) => settings.getOrgSettings(ctx),
  },
  {
    name: 'settings.org.update', title: 'Update organization settings', access: 'write', route: 'PUT /v1/settings/org',
    description: 'Merge keys into the organization settings (needs org.manage_settings); null removes a key.',
    keywords: ['configuration', 'config', 'options', 'change'],
    run: (ctx, a) => settings.putOrgSettings(ctx, a.settings as Record<string, unknown>),
  },
  {
    name: 'settings.preferences.get', title: 'My preferences', access: 'read', route: 'GET /v1/settings/preferences',
    description: "The caller's preferences document in this organization.",
    keywords: ['personal', 'options'],
    run: (ctx) => settings.getPreferences(ctx),
  },
  {
    name: 'settings.preferences.update', title: 'Update my preferences', access: 'write', route: 'PUT /v1/settings/preferences',
    description: "Merge keys into the caller's preferences document (max 64 KB).",
    keywords: ['personal', 'options', 'change'],
    run: (ctx, a) => settings.putPreferences(ctx, a.preferences as Record<string, unknown>),
  },
  {
    name: 'settings.views.list', title: 'Saved views', access: 'read', route: 'GET /v1/settings/views',
    description: "The caller's saved views (filters and layouts), at most 100.",
    keywords: ['filters', 'layouts', 'saved'],
    run: async (ctx, a) => { const { items, total } = await views.listViews(ctx, page(a)); return listResult(items, { total, ...page(a) }); },
  },
  {
    name: 'settings.views.create', title: 'Save a view', access: 'write', route: 'POST /v1/settings/views',
    description: 'Save a view (filters and layout) for the caller; the 101st is refused.',
    keywords: ['filter', 'layout', 'save'],
    run: (ctx, a) => views.createView(ctx, a as CreateViewInput),
  },
  {
    name: 'settings.views.delete', title: 'Delete a saved view', access: 'write', route: 'DELETE /v1/settings/views/:viewId',
    description: 'Delete one of the caller\'s saved views.',
    run: (ctx, a) => views.deleteView(ctx, a.viewId as string),
  },
  {
    name: 'alert_rules.list', title: 'List alert rules', access: 'read', route: 'GET /v1/alert-rules',
    description: 'Alert rules of the organization (event type or trigger, conditions, channels), newest first.',
    keywords: ['alerts', 'rules', 'triggers', 'monitoring', 'notifications'],
    run: async (ctx, a) => { const { items, total } = await alerts.listAlertRules(ctx, page(a)); return listResult(items, { total, ...page(a) }); },
  },
  {
    name: 'alert_rules.create', title: 'Create an alert rule', access: 'write', route: 'POST /v1/alert-rules',
    description: 'Create an alert rule on an event type (e.g. task overdue) or trigger, with conditions and channels (in_app by default).',
    keywords: ['alert', 'rule', 'trigger', 'notify', 'watch'],
    run: (ctx, a) => alerts.createAlertRule(ctx, a as CreateAlertRuleInput),
  },
  {
    name: 'alert_rules.deliveries.list', title: 'Alert deliveries', access: 'read', route: 'GET /v1/alert-rules/:alertRuleId/deliveries',
    description: 'Deliveries of an alert rule: channel, status, attempts, last error.',
    keywords: ['alerts', 'sent', 'history'],
    run: async (ctx, a) => { const { items, total } = await alerts.listDeliveries(ctx, a.alertRuleId as string, page(a)); return listResult(items, { total, ...page(a) }); },
  },
]);
