import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, bearer, type Tenant, type TestApp } from '../../../test/helpers.js';

// Workspace tools and resources over POST /v1/mcp (app.inject).
let t: TestApp;
let owner: Tenant;
let key: string;
const ACCEPT = 'application/json, text/event-stream';

beforeAll(async () => {
  t = await buildTestApp();
  owner = await newTenant(t.app, { name: 'mcp-resources' });
  key = await owner.apiKey(['mcp:*']);
});
afterAll(async () => { await t.close(); });

function post(body: unknown, opts: { key?: string; headers?: Record<string, string> } = {}) {
  return t.app.inject({
    method: 'POST', url: '/v1/mcp',
    headers: { ...bearer(opts.key ?? key), 'content-type': 'application/json', accept: ACCEPT, ...(opts.headers ?? {}) },
    payload: JSON.stringify(body),
  });
}
const call = (name: string, args: unknown, opts: { key?: string } = {}) =>
  post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }, opts);
function rpcErr(res: { statusCode: number; json(): any }, code: number) {
  expect(res.statusCode).toBe(200);
  const body = res.json();
  expect(body.jsonrpc).toBe('2.0');
  expect(body.error?.code, JSON.stringify(body)).toBe(code);
  return body.error as { code: number; message: string; data?: any };
}
describe('workspace tools', () => {
  it('settings, saved views and alert rules through the same services', async () => {
    const put = (await call('settings.preferences.update', { preferences: { theme: 'dark' } })).json().result;
    expect(put.isError, JSON.stringify(put)).toBeUndefined();
    const prefs = (await call('settings.preferences.get', {})).json().result.structuredContent;
    expect(JSON.stringify(prefs)).toContain('dark');
    const rules = (await call('alert_rules.list', {})).json().result;
    expect(rules.isError).toBeUndefined();
    expect(rules.structuredContent.pagination).toBeDefined();
    const settingsOnly = await owner.apiKey(['settings:read']);
    expect((await call('settings.org.get', {}, { key: settingsOnly })).json().result.isError).toBeUndefined();
    expect(rpcErr(await call('settings.org.update', { settings: { a: 1 } }, { key: settingsOnly }), -32603).message).toContain('mcp:settings.write');
  });
});

describe('resources', () => {
  it('lists specs with cursor pagination and reads them by URI; gated like specs.get', async () => {
    const tenant = await newTenant(t.app, { name: 'mcp-res' });
    const k = await tenant.apiKey(['mcp:*']);
    const p1 = (await call('projects.create', { name: 'R1' }, { key: k })).json().result.structuredContent;
    const p2 = (await call('projects.create', { name: 'R2' }, { key: k })).json().result.structuredContent;
    const made: string[] = [];
    for (let i = 0; i < 30; i++) {
      const s = (await call('specs.create', { projectId: i % 2 ? p1.id : p2.id, title: `Spec ${i}`, content: `content ${i}` }, { key: k })).json().result.structuredContent;
      made.push(`platform://specs/${s.spec_id}`);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = (await post({ jsonrpc: '2.0', id: 1, method: 'resources/list', params: cursor ? { cursor } : {} }, { key: k })).json().result;
      seen.push(...r.resources.map((x: { uri: string }) => x.uri));
      cursor = r.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect(seen.sort()).toEqual([...made].sort());

    const noSpecs = await tenant.apiKey(['mcp:tasks.read']);
    expect((await post({ jsonrpc: '2.0', id: 1, method: 'resources/list' }, { key: noSpecs })).json().result.resources).toEqual([]);
    // A key for one tool (reading one spec by id) reads it as a resource, and does not list them all.
    const oneTool = await tenant.apiKey(['mcp:specs.get']);
    expect((await post({ jsonrpc: '2.0', id: 1, method: 'resources/list' }, { key: oneTool })).json().result.resources).toEqual([]);
    expect((await post({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: made[0] } }, { key: oneTool })).json().result.contents).toHaveLength(1);
    const denied = rpcErr(await post({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: made[0] } }, { key: noSpecs }), -32603);
    expect(denied.message).toContain('mcp:specs.read');
    // Another tenant cannot read it either.
    rpcErr(await post({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: made[0] } }), -32002);
  });
});
