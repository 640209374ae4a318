import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { buildTestApp, newTenant, bearer, type Tenant, type TestApp } from '../../../test/helpers.js';
import { insertApiKey } from '../../areas/accounts/api-keys.service.js';
import { purgeIdleSessions } from './sessions.js';

// JSON-RPC rules of POST /v1/mcp through app.inject: error codes, sessions, headers, scopes.
let t: TestApp;
let owner: Tenant;
let key: string;
const ACCEPT = 'application/json, text/event-stream';

beforeAll(async () => {
  t = await buildTestApp();
  owner = await newTenant(t.app, { name: 'mcp-rpc' });
  key = await owner.apiKey(['mcp:*']);
});
afterAll(async () => { await t.close(); });

function post(body: unknown, opts: { key?: string; headers?: Record<string, string>; raw?: boolean } = {}) {
  return t.app.inject({
    method: 'POST', url: '/v1/mcp',
    headers: { ...bearer(opts.key ?? key), 'content-type': 'application/json', accept: ACCEPT, ...(opts.headers ?? {}) },
    payload: opts.raw ? (body as string) : JSON.stringify(body),
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
async function initialize(k = key, version = '2025-11-25') {
  const res = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'inject', version: '1' } } }, { key: k });
  expect(res.statusCode).toBe(200);
  return { res, sid: res.headers['mcp-session-id'] as string, result: res.json().result };
}

describe('JSON-RPC error codes (all inside HTTP 200)', () => {
  it('-32700 for a body that is not UTF-8 (JSON is UTF-8)', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/mcp', headers: { ...bearer(key), 'content-type': 'application/json', accept: ACCEPT },
      payload: Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"'), Buffer.from([0xff]), Buffer.from('"}}')]) });
    rpcErr(res, -32700);
  });

  it('-32700 for unparsable JSON and an empty body', async () => {
    expect(rpcErr(await post('{"jsonrpc": "2.0", "id": 1, "method": ', { raw: true }), -32700).message).toMatch(/Parse error/);
    expect((await post('{not json', { raw: true })).json().id).toBeNull();
  });

  it('-32602 with the request id for valid JSON holding a __proto__ or constructor.prototype key (not a parse error)', async () => {
    const proto = await post('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"documents.create","arguments":{"title":"p","metadata":{"__proto__":{"x":1}}}}}', { raw: true });
    expect(rpcErr(proto, -32602).message).toMatch(/^Invalid params: .*prototype/);
    expect(proto.json().id).toBe(7);
    const ctor = await post('{"jsonrpc":"2.0","id":"c1","method":"ping","params":{"constructor":{"prototype":{"x":1}}}}', { raw: true });
    expect(rpcErr(ctor, -32602).message).toMatch(/^Invalid params: /);
    expect(ctor.json().id).toBe('c1');
    // Otherwise the usual checks: a batch or a malformed message is -32600, a notification 202.
    rpcErr(await post('[{"jsonrpc":"2.0","id":1,"method":"ping","params":{"__proto__":{}}}]', { raw: true }), -32600);
    rpcErr(await post('{"jsonrpc":"1.0","id":1,"method":"ping","params":{"__proto__":{}}}', { raw: true }), -32600);
    expect((await post('{"jsonrpc":"2.0","method":"notifications/x","params":{"__proto__":{}}}', { raw: true })).statusCode).toBe(202);
  });

  it('-32600 for malformed messages and for batches (MCP 2025-11-25 has no batching)', async () => {
    rpcErr(await post({ id: 1, method: 'ping' }), -32600);
    rpcErr(await post({ jsonrpc: '1.0', id: 1, method: 'ping' }), -32600);
    rpcErr(await post({ jsonrpc: '2.0', id: 1, method: 7 }), -32600);
    rpcErr(await post({ jsonrpc: '2.0', id: { x: 1 }, method: 'ping' }), -32600);
    // An integer id JSON.parse cannot hold exactly could not be echoed back unchanged.
    rpcErr(await post('{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}', { raw: true }), -32600);
    expect((await post('{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}', { raw: true })).json().id).toBe(9007199254740991);
    // Params that are not an object: the request is well formed, its params are not (-32602, as for an array).
    for (const params of ['x', null, 5, true, []]) {
      const res = await post({ jsonrpc: '2.0', id: 'p', method: 'ping', params });
      expect({ params, id: res.json().id, error: rpcErr(res, -32602) }).toMatchObject({ params, id: 'p', error: { data: { field: 'params' } } });
    }
    rpcErr(await post('"just a string"', { raw: true }), -32600);
    const batch = rpcErr(await post([{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 2, method: 'ping' }]), -32600);
    expect(batch.message).toMatch(/batch/i);
    rpcErr(await post([]), -32600);
    // The id of an invalid request is echoed when it is usable.
    expect((await post({ jsonrpc: '2.0', id: 'abc', method: '' })).json().id).toBe('abc');
  });

  it('a body nested deeper than the limit is 413 PAYLOAD_TOO_LARGE with details.limit and details.maxBytes, as on REST', async () => {
    let params: Record<string, unknown> = {};
    for (let i = 0; i < 40; i++) params = { a: params };
    const res = await post({ jsonrpc: '2.0', id: 1, method: 'ping', params });
    expect(res.statusCode).toBe(413);
    expect(res.json().error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { limit: 32, maxBytes: expect.any(Number) } });
  });

  it('-32601 for an unknown method', async () => {
    const e = rpcErr(await post({ jsonrpc: '2.0', id: 9, method: 'prompts/list' }), -32601);
    expect(e.message).toContain('prompts/list');
  });

  it('-32602 for bad params, unknown tools and arguments that fail the schema', async () => {
    rpcErr(await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} }), -32602);
    rpcErr(await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: [1, 2] }), -32602);
    rpcErr(await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'projects.list', arguments: [] } }), -32602);
    rpcErr(await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { capabilities: {} } }), -32602);
    rpcErr(await post({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: {} }), -32602);
    rpcErr(await post({ jsonrpc: '2.0', id: 1, method: 'resources/list', params: { cursor: 'bogus' } }), -32602);
    // Past the last provider; offsets beyond what a statement accepts (they reached PostgreSQL: -32603 DATABASE_ERROR).
    for (const forged of [{ p: -1, c: null }, { p: 1.5, c: null }, { p: 0 }, { p: 99, c: null }, { p: 0, c: { po: 1e300, so: 0 } }, { p: 1, c: { o: 1e300 } }, { p: 1, c: { o: 2 ** 31 } }]) {
      rpcErr(await post({ jsonrpc: '2.0', id: 1, method: 'resources/list', params: { cursor: Buffer.from(JSON.stringify(forged)).toString('base64url') } }), -32602);
    }
    expect(rpcErr(await call('nope.nothing', {}), -32602).message).toContain('nope.nothing');
    const missing = rpcErr(await call('projects.create', {}), -32602);
    expect(missing.message).toContain('"name"');
    const wrongType = rpcErr(await call('projects.list', { limit: '5' }), -32602);
    expect(wrongType.data.field).toBe('limit');
    rpcErr(await call('projects.get', { projectId: 'not-a-uuid' }), -32602);
    rpcErr(await call('projects.create', { name: 'x', id: '018f0000-0000-7000-8000-000000000000' }), -32602);
    rpcErr(await call('tasks.update', { taskId: '018f0000-0000-7000-8000-000000000000' }), -32602);
    rpcErr(await call('find_tools', {}), -32602);
    rpcErr(await call('call_tool', { name: 'call_tool', arguments: {} }), -32602);
  });

  it('-32602 describes a failed anyOf, not its first branch: an update without fields, a value outside a literal union', async () => {
    const id = '018f0000-0000-7000-8000-000000000000';
    for (const [name, args] of [['tasks.update', { taskId: id }], ['projects.update', { projectId: id }]] as const) {
      const e = rpcErr(await call(name, args), -32602);
      expect(e.message).toBe(`Invalid arguments for "${name}": at least one field to change is required`);
      expect(e.data.field).toBe('');
    }
    const priority = rpcErr(await call('tasks.create', { projectId: id, title: 'x', priority: 'urgent' }), -32602);
    expect(priority.message).toBe('Invalid arguments for "tasks.create": argument "priority" must be one of: "critical", "high", "medium", "low"');
    expect(priority.data.field).toBe('priority');
    const contentType = rpcErr(await call('documents.create', { title: 'x', content_type: 'html' }), -32602);
    expect(contentType.message).toBe('Invalid arguments for "documents.create": argument "content_type" must be one of: "markdown", "plain", "rich_text"');
    // Other unions keep the useful error: the type list for plain types, the failing branch for a nullable uuid.
    expect(rpcErr(await call('tasks.update', { taskId: id, description: 5 }), -32602).message)
      .toBe('Invalid arguments for "tasks.update": argument "description" must be string or null');
    const assignee = rpcErr(await call('tasks.update', { taskId: id, assignee_id: 'bob' }), -32602);
    expect(assignee.message).toBe('Invalid arguments for "tasks.update": argument "assignee_id" must match format "uuid"');
    expect(assignee.data.field).toBe('assignee_id');
  });

  it('-32002 for a resource URI that names nothing visible', async () => {
    rpcErr(await post({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'platform://specs/018f0000-0000-7000-8000-000000000000' } }), -32002);
    rpcErr(await post({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'platform://specs/not-a-uuid' } }), -32002);
    rpcErr(await post({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'platform://nothing/1' } }), -32002);
    for (const uri of ['file:///etc/passwd', 'https://example.com/x', 'not a uri']) {
      expect(rpcErr(await post({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri } }), -32002).data).toEqual({ uri });
    }
  });

  it('notifications and client responses are accepted with 202 and no body', async () => {
    for (const body of [{ jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }, { jsonrpc: '2.0', id: 5, result: {} }]) {
      const res = await post(body);
      expect(res.statusCode).toBe(202);
      expect(res.body).toBe('');
    }
  });

  it('notifications/initialized sent with an id (a request) is acknowledged with an empty result', async () => {
    const res = await post({ jsonrpc: '2.0', id: 9, method: 'notifications/initialized' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ jsonrpc: '2.0', id: 9, result: {} });
  });
});

describe('lifecycle and sessions', () => {
  it('initialize negotiates the version, gives instructions and a session id', async () => {
    const { res, sid, result } = await initialize();
    expect(sid).toMatch(/^[\x21-\x7e]+$/);
    expect(result.protocolVersion).toBe('2025-11-25');
    expect(result.capabilities.tools).toBeDefined();
    expect(result.capabilities.resources).toBeDefined();
    expect(result.serverInfo.name).toBe('platform-api');
    expect(result.instructions).toMatch(/find_tools.*get_tool_schema.*call_tool/s);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect((await initialize(key, '2025-06-18')).result.protocolVersion).toBe('2025-06-18');
    expect((await initialize(key, '1999-01-01')).result.protocolVersion).toBe('2025-11-25');
    // 2025-03-26 requires batches, which this server does not take: it offers its own version instead.
    expect((await initialize(key, '2025-03-26')).result.protocolVersion).toBe('2025-11-25');
  });

  it('checks MCP-Session-Id and MCP-Protocol-Version on later requests', async () => {
    const { sid } = await initialize();
    const h = (extra: Record<string, string>) => ({ headers: { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25', ...extra } });
    const ok = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, h({}));
    expect(ok.statusCode).toBe(202);
    const ping = await post({ jsonrpc: '2.0', id: 2, method: 'ping' }, h({}));
    expect(ping.json()).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    expect(ping.headers['mcp-session-id']).toBe(sid);

    const badVersion = await post({ jsonrpc: '2.0', id: 3, method: 'ping' }, h({ 'mcp-protocol-version': '2030-01-01' }));
    expect(badVersion.statusCode).toBe(400);
    const otherVersion = await post({ jsonrpc: '2.0', id: 3, method: 'ping' }, h({ 'mcp-protocol-version': '2025-06-18' }));
    expect(otherVersion.statusCode).toBe(400);
    expect(otherVersion.json().id).toBe(3); // the refusal carries the request's id, so the client can match it
    const unknown = await post({ jsonrpc: '2.0', id: 4, method: 'ping' }, { headers: { 'mcp-session-id': 'x'.repeat(43) } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.code).toBe(-32001);
    expect(unknown.json().id).toBe(4);

    // A session answers only to the credential that opened it.
    const otherKey = await owner.apiKey(['mcp:*']);
    expect((await post({ jsonrpc: '2.0', id: 5, method: 'ping' }, { key: otherKey, ...h({}) })).statusCode).toBe(404);

    const del = await t.app.inject({ method: 'DELETE', url: '/v1/mcp', headers: { ...bearer(key), 'mcp-session-id': sid } });
    expect(del.statusCode).toBe(204);
    expect((await post({ jsonrpc: '2.0', id: 6, method: 'ping' }, h({}))).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'DELETE', url: '/v1/mcp', headers: { ...bearer(key), 'mcp-session-id': sid } })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'DELETE', url: '/v1/mcp', headers: bearer(key) })).statusCode).toBe(400);
    // Without the session header the endpoint stays stateless.
    expect((await post({ jsonrpc: '2.0', id: 7, method: 'ping' })).statusCode).toBe(200);
  });

  it('sessions unseen for 30 days are deleted for every organization, hourly, even one that opens no more sessions', async () => {
    const { sid: idle } = await initialize();
    const { sid: recent } = await initialize();
    await t.platform.db.sys.exec(`UPDATE mcp_sessions SET last_seen_at = now() - interval '31 days' WHERE id = $1`, [idle]);
    await t.platform.db.sys.exec(`UPDATE mcp_sessions SET last_seen_at = now() - interval '29 days' WHERE id = $1`, [recent]);
    await purgeIdleSessions(t.platform.db.sys);
    const left = await t.platform.db.sys.query<{ id: string }>(`SELECT id FROM mcp_sessions WHERE id = ANY($1)`, [[idle, recent]]);
    expect(left.map((r) => r.id)).toEqual([recent]);
  });

  it('re-initializing with a stale session id opens a new session', async () => {
    const { sid } = await initialize();
    await t.app.inject({ method: 'DELETE', url: '/v1/mcp', headers: { ...bearer(key), 'mcp-session-id': sid } });
    const res = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }, { headers: { 'mcp-session-id': sid } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['mcp-session-id']).not.toBe(sid);
  });

  it('Accept: JSON by default, one SSE event when only text/event-stream is accepted, else 406', async () => {
    const sse = await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { headers: { accept: 'text/event-stream' } });
    expect(sse.statusCode).toBe(200);
    expect(sse.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(sse.body).toBe('event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
    expect((await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { headers: { accept: '*/*' } })).headers['content-type']).toMatch(/json/);
    const no = await post({ jsonrpc: '2.0', id: 'n-1', method: 'ping' }, { headers: { accept: 'text/html' } });
    expect(no.statusCode).toBe(406);
    expect(no.json()).toMatchObject({ jsonrpc: '2.0', id: 'n-1', error: { code: -32000 } }); // the id of a readable message
    const unreadable = await post('{not json', { raw: true, headers: { accept: 'text/html' } });
    expect({ status: unreadable.statusCode, id: unreadable.json().id }).toEqual({ status: 406, id: null });
  });

  it('GET answers 405 (no server stream); a foreign browser Origin is refused', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/mcp', headers: { ...bearer(key), accept: 'text/event-stream' } });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toContain('POST');
    // An HTTP refusal, not a JSON-RPC message: the error envelope of part 7.
    expect(res.json()).toMatchObject({ success: false, error: { code: 'METHOD_NOT_ALLOWED' } });
    const evil = await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { headers: { origin: 'https://evil.example' } });
    expect(evil.statusCode).toBe(403);
    // Refused before the credential is looked at: 403 without one too (MCP transport rule), and on GET and DELETE.
    const anonymous = await t.app.inject({ method: 'POST', url: '/v1/mcp', headers: { 'content-type': 'application/json', accept: ACCEPT, origin: 'https://evil.example' },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) });
    expect(anonymous.statusCode).toBe(403);
    expect(anonymous.json().error.code).toBe('FORBIDDEN');
    for (const method of ['GET', 'DELETE'] as const) {
      expect((await t.app.inject({ method, url: '/v1/mcp', headers: { ...bearer(key), origin: 'https://evil.example' } })).statusCode).toBe(403);
    }
    // Same origin is trusted only at a loopback Host (no PUBLIC_BASE_URL here): a rebound name (evil.example resolving
    // to this server) is "same-origin" with itself and is refused; http://localhost:8080 calling itself is not.
    const rebound = await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { headers: { origin: 'http://evil.example:8080', host: 'evil.example:8080' } });
    expect(rebound.statusCode).toBe(403);
    const local = await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { headers: { origin: 'http://localhost:8080', host: 'localhost:8080' } });
    expect(local.statusCode).toBe(200);
    // Without an Origin (a server-side client) nothing changes: no credential is still 401.
    expect((await t.app.inject({ method: 'POST', url: '/v1/mcp', headers: { 'content-type': 'application/json', accept: ACCEPT },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) })).statusCode).toBe(401);
  });
});

describe('tools: catalogue and access', () => {
  it('tools/list shows three meta-tools, every tool with full=true, each with a scope', async () => {
    const small = (await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).json().result.tools;
    expect(small.map((x: { name: string }) => x.name)).toEqual(['find_tools', 'get_tool_schema', 'call_tool']);
    expect(small[2].inputSchema.properties.arguments.type).toBe('object');
    // Every entry has _meta (docs/mcp.md), the meta-tools too: anyone may call them.
    for (const meta of small) expect(meta._meta, meta.name).toEqual({ scope: null, coarse_scope: null, permission: null, feature: null, allowed: true });
    const full = (await post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { full: true } })).json().result.tools;
    const byName = Object.fromEntries(full.map((x: { name: string }) => [x.name, x]));
    expect(byName['projects.create']._meta.scope).toBe('mcp:projects.write');
    expect(byName['projects.create']._meta.coarse_scope).toBe('projects:write');
    expect(byName['projects.list'].annotations.readOnlyHint).toBe(true);
    expect(byName['tasks.create'].inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
    expect(byName['me.get']).toBeDefined();
    expect(byName['organizations.list']).toBeDefined();
    expect(byName['api_keys.list']).toBeDefined();
    for (const tool of full) expect(tool.name).toMatch(/^[A-Za-z0-9_.-]{1,128}$/);
    for (const tool of full) expect(Object.keys(tool._meta ?? {}).sort(), tool.name).toEqual(['allowed', 'coarse_scope', 'feature', 'permission', 'scope']);
  });

  it('find_tools ranks by relevance over names and descriptions', async () => {
    const find = async (query: string) => (await call('find_tools', { query })).json().result.structuredContent.tools.map((x: { name: string }) => x.name);
    expect((await find('create task'))[0]).toBe('tasks.create');
    expect((await find('add a new project'))[0]).toBe('projects.create');
    expect((await find('specifications'))[0]).toMatch(/^specs\./);
    expect((await find('who am i'))[0]).toBe('me.get');
    expect((await find('mark a task done'))[0]).toBe('tasks.update');
    expect(await find('zzzqqq')).toEqual([]);
  });

  it('results carry their structured content as JSON in the text block (MCP structured content), find_tools too', async () => {
    for (const [name, args] of [['find_tools', { query: 'create task' }], ['find_tools', { query: 'zzzqqq' }], ['get_tool_schema', { name: 'tasks.create' }], ['projects.list', {}]] as const) {
      const r = (await call(name, args)).json().result;
      expect(r.content).toHaveLength(1);
      expect(JSON.parse(r.content[0].text)).toEqual(r.structuredContent);
    }
    const found = (await call('find_tools', { query: 'create task' })).json().result.structuredContent;
    expect(found.next).toMatch(/get_tool_schema.*call_tool/);
  });

  it('get_tool_schema describes the meta-tools too (tools/list shows them)', async () => {
    for (const name of ['find_tools', 'get_tool_schema', 'call_tool']) {
      const r = (await call('get_tool_schema', { name })).json().result;
      expect(r.isError).toBeUndefined();
      expect(r.structuredContent).toMatchObject({ name, scope: null, allowed: true, inputSchema: { type: 'object', additionalProperties: false } });
    }
    const callTool = (await call('get_tool_schema', { name: 'call_tool' })).json().result.structuredContent;
    expect(callTool.inputSchema.required).toEqual(['name']);
    expect(callTool.inputSchema.properties.arguments.type).toBe('object');
  });

  it('get_tool_schema of an unknown tool is a tool error with suggestions', async () => {
    const r = (await call('get_tool_schema', { name: 'project.create' })).json().result;
    expect(r.isError).toBe(true);
    expect(r.structuredContent.error.details.suggestions).toContain('projects.create');
  });

  it('scopes: fine-grained, write implies read, per-tool, coarse grant; identical on call_tool and tools/call', async () => {
    const readOnly = await owner.apiKey(['mcp:projects.read']);
    expect((await call('projects.list', {}, { key: readOnly })).json().result.isError).toBeUndefined();
    for (const res of [
      await call('projects.create', { name: 'x' }, { key: readOnly }),
      await call('call_tool', { name: 'projects.create', arguments: { name: 'x' } }, { key: readOnly }),
    ]) {
      const e = rpcErr(res, -32603);
      expect(e.message).toContain('mcp:projects.write');
      expect(e.data).toMatchObject({ code: 'FORBIDDEN', status: 403, details: { requiredScope: 'mcp:projects.write' } });
    }
    // Scope is checked before arguments: a refused call with bad arguments still names the scope.
    expect(rpcErr(await call('projects.create', {}, { key: readOnly }), -32603).message).toContain('mcp:projects.write');
    rpcErr(await call('tasks.list', { projectId: '018f0000-0000-7000-8000-000000000000' }, { key: readOnly }), -32603);

    const write = await owner.apiKey(['mcp:projects.write']);
    const created = (await call('projects.create', { name: 'Scoped' }, { key: write })).json().result;
    expect(created.isError).toBeUndefined();
    expect((await call('projects.get', { projectId: created.structuredContent.id }, { key: write })).json().result.isError).toBeUndefined();

    const oneTool = await owner.apiKey(['mcp:projects.get']);
    expect((await call('projects.get', { projectId: created.structuredContent.id }, { key: oneTool })).json().result.isError).toBeUndefined();
    rpcErr(await call('projects.list', {}, { key: oneTool }), -32603);

    const coarse = await owner.apiKey(['projects:read']);
    expect((await call('projects.list', {}, { key: coarse })).json().result.isError).toBeUndefined();
    expect((await call('tasks.list', { projectId: created.structuredContent.id }, { key: coarse })).json().result.isError).toBeUndefined();
    expect(rpcErr(await call('tasks.create', { projectId: created.structuredContent.id, title: 'x' }, { key: coarse }), -32603).message).toContain('mcp:tasks.write');

    // Routes that need no scope on REST (GET /v1/me) need none here either; a settings-scoped REST route does.
    const unrelated = await owner.apiKey(['vision']);
    expect((await call('me.get', {}, { key: unrelated })).json().result.structuredContent.credential.scopes).toEqual(['vision']);
    expect(rpcErr(await call('api_keys.list', {}, { key: unrelated }), -32603).message).toContain('mcp:api_keys.read');

    // tools/list marks what this credential may call.
    const full = (await post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { full: true } }, { key: readOnly })).json().result.tools;
    const allowed = Object.fromEntries(full.filter((x: { _meta?: unknown }) => x._meta).map((x: { name: string; _meta: { allowed: boolean } }) => [x.name, x._meta.allowed]));
    expect(allowed['projects.list']).toBe(true);
    expect(allowed['projects.create']).toBe(false);
  });

  it('role permissions apply as on REST (viewer cannot create: -32603 PERMISSION_DENIED)', async () => {
    const add = await t.app.inject({ method: 'POST', url: '/v1/organizations/current/members', headers: owner.auth, payload: { email: `viewer-${Date.now()}@example.test`, role: 'viewer' } });
    expect(add.statusCode).toBe(201);
    const viewerId = add.json().data.user_id;
    const viewerKey = await t.platform.db.tenantTx(owner.orgId, (sql) => insertApiKey(sql, owner.orgId, viewerId, 'viewer', ['mcp:*'], new Date(Date.now() + 86_400_000).toISOString()));
    expect((await call('projects.list', {}, { key: viewerKey.key })).json().result.isError).toBeUndefined();
    const e = rpcErr(await call('projects.create', { name: 'no' }, { key: viewerKey.key }), -32603);
    expect(e.data.code).toBe('PERMISSION_DENIED');
    expect(e.message).toContain('project.create');
  });

  it('the organization\'s mcp feature is required for tools and resources (-32603 FEATURE_DISABLED)', async () => {
    const other = await newTenant(t.app, { name: 'mcp-nofeature' });
    const otherKey = await other.apiKey(['mcp:*']);
    const off = await t.app.inject({ method: 'PUT', url: `/v1/admin/organizations/${other.orgId}/entitlements`, headers: bearer(t.rootKey), payload: { features: ['documents'] } });
    expect(off.statusCode).toBe(200);
    const e = rpcErr(await call('projects.list', {}, { key: otherKey }), -32603);
    expect(e.data.code).toBe('FEATURE_DISABLED');
    expect((await post({ jsonrpc: '2.0', id: 1, method: 'resources/list' }, { key: otherKey })).json().result.resources).toEqual([]);
  });

  it("each tool's REST feature applies too: without `documents`, document tools are refused and project tools work", async () => {
    const other = await newTenant(t.app, { name: 'mcp-nodocs' });
    const otherKey = await other.apiKey(['mcp:*']);
    const res = await t.app.inject({ method: 'PUT', url: `/v1/admin/organizations/${other.orgId}/entitlements`, headers: bearer(t.rootKey), payload: { features: ['mcp'] } });
    expect(res.statusCode).toBe(200);
    expect((await call('projects.list', {}, { key: otherKey })).json().result.isError).toBeUndefined();
    const e = rpcErr(await call('documents.search', { search: 'x' }, { key: otherKey }), -32603);
    expect(e.data.code).toBe('FEATURE_DISABLED');
    expect(e.message).toContain('documents');
    rpcErr(await post({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'platform://documents/018f0000-0000-7000-8000-000000000000' } }, { key: otherKey }), -32603);
  });

  it('cross-tenant ids read as not found (tool error), never as another tenant\'s data', async () => {
    const other = await newTenant(t.app, { name: 'mcp-other' });
    const otherKey = await other.apiKey(['mcp:*']);
    const mine = (await call('projects.create', { name: 'Mine' })).json().result.structuredContent;
    const r = (await call('projects.get', { projectId: mine.id }, { key: otherKey })).json().result;
    expect(r.isError).toBe(true);
    expect(r.structuredContent.error.code).toBe('NOT_FOUND');
  });

  it('path ids may be written in snake_case like every other argument (project_id for projectId), on call_tool too', async () => {
    const project = (await call('projects.create', { name: 'Snake ids' })).json().result.structuredContent;
    const task = (await call('tasks.create', { project_id: project.id, title: 'snake' })).json().result.structuredContent;
    expect(task).toMatchObject({ project_id: project.id, title: 'snake' });
    const viaCallTool = (await call('call_tool', { name: 'tasks.get', arguments: { task_id: task.id } })).json().result.structuredContent;
    expect(viaCallTool).toMatchObject({ id: task.id });
    expect((await call('projects.get', { project_id: project.id })).json().result.structuredContent.id).toBe(project.id);
    // An error names the argument as sent.
    const bad = rpcErr(await call('tasks.create', { project_id: 'nope', title: 'x' }), -32602);
    expect([bad.data.field, bad.message]).toEqual(['project_id', expect.stringContaining('argument "project_id"')]);
    // Both spellings at once: the snake_case one is an unknown argument, as before.
    expect(rpcErr(await call('projects.get', { project_id: project.id, projectId: project.id }), -32602).data.field).toBe('project_id');
    // A tool whose snake_case name is an argument of its own keeps it (tasks.list filters by spec_id; no specId there).
    expect((await call('tasks.list', { projectId: project.id, spec_id: project.id })).json().result.structuredContent.items).toEqual([]);
  });
});

describe('tool arguments PostgreSQL cannot store', () => {
  it('an unpaired surrogate in any argument is a tool error VALIDATION_ERROR (UNSTORABLE_CHARACTER) naming the field, nothing written', async () => {
    const raw = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"projects.create","arguments":{"name":"sur","settings":{"k":"\\ud800"}}}}';
    const res = await post(raw, { raw: true });
    expect(res.statusCode).toBe(200);
    const r = res.json().result;
    expect(r.isError).toBe(true);
    expect(r.structuredContent.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { reason: 'UNSTORABLE_CHARACTER', field: 'settings.k' } });
    const n = await t.platform.db.sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM projects WHERE org_id = $1 AND name = 'sur'`, [owner.orgId]);
    expect(n!.n).toBe(0);
  });

  it('a number past the double range (it would be stored as null) is a tool error VALIDATION_ERROR (NUMBER_OUT_OF_RANGE), nothing written', async () => {
    const raw = '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"projects.create","arguments":{"name":"huge","settings":{"n":1e400}}}}';
    const res = await post(raw, { raw: true });
    expect(res.statusCode).toBe(200);
    const r = res.json().result;
    expect(r.isError).toBe(true);
    expect(r.structuredContent.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { reason: 'NUMBER_OUT_OF_RANGE', field: 'settings.n' } });
    const n = await t.platform.db.sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM projects WHERE org_id = $1 AND name = 'huge'`, [owner.orgId]);
    expect(n!.n).toBe(0);
  });

  it('a date-time outside years 1-9999 is refused like any invalid argument (-32602), not a server error', async () => {
    const p = (await call('projects.create', { name: 'mcp dates' })).json().result.structuredContent;
    const projectId = p.id ?? p.data?.id;
    expect(projectId).toMatch(/^[0-9a-f-]{36}$/);
    const e = rpcErr(await call('tasks.create', { projectId, title: 'd', due_date: '0000-01-01T00:00:00Z' }), -32602);
    expect(e.message).toMatch(/due_date/);
    // Both accepted forms are named, as on REST.
    const wrong = rpcErr(await call('tasks.create', { projectId, title: 'd', due_date: '03/01/2027' }), -32602);
    expect(wrong.message).toBe('Invalid arguments for "tasks.create": argument "due_date" must be an RFC 3339 date-time, a YYYY-MM-DD date or null');
  });
});

describe('docs/mcp.md', () => {
  it('its tool table names every tool with the scope and coarse grant the server applies', async () => {
    const doc = readFileSync(new URL('../../../docs/mcp.md', import.meta.url), 'utf8');
    const rows = new Map([...doc.matchAll(/^\| `([a-z_]+(?:\.[a-z_]+)+)` \| [^|]+ \| `([^`]+)` \| ([^|]+) \|/gm)]
      .map((m) => [m[1], { scope: m[2], coarse: /^`([^`]+)`/.exec(m[3].trim())?.[1] ?? null }]));
    const listed = (await post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { full: true } })).json().result.tools as
      Array<{ name: string; _meta?: { scope: string; coarse_scope: string | null } }>;
    const served = listed.filter((tool) => tool._meta?.scope !== null).map((tool) => ({ name: tool.name, _meta: tool._meta! })); // not the meta-tools
    expect(served.length).toBeGreaterThan(10);
    expect([...rows.keys()].sort()).toEqual(served.map((tool) => tool.name).sort());
    for (const tool of served) expect({ tool: tool.name, ...rows.get(tool.name) }).toEqual({ tool: tool.name, scope: tool._meta.scope, coarse: tool._meta.coarse_scope });
  });
});
