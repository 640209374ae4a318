import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { AddressInfo } from 'node:net';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { buildTestApp, newTenant, type Tenant, type TestApp } from '../../../test/helpers.js';

// The official MCP TypeScript SDK client, over its Streamable HTTP transport, against the app on a real socket.
let t: TestApp;
let base: string;
let owner: Tenant;

beforeAll(async () => {
  t = await buildTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  owner = await newTenant(t.app, { name: 'mcp-sdk' });
});
afterAll(async () => { await t.close(); });

async function connect(key: string) {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/v1/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  const client = new Client({ name: 'vitest-agent', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

const structured = (r: any) => r.structuredContent as Record<string, any>;

describe('MCP with the SDK client (session handshake)', () => {
  it('connects, negotiates 2025-11-25, discovers, calls tools and reads resources', async () => {
    const key = await owner.apiKey(['mcp:*']);
    const { client, transport } = await connect(key);
    try {
      expect(transport.sessionId).toMatch(/^[A-Za-z0-9_-]{16,}$/);
      expect(transport.protocolVersion).toBe('2025-11-25');
      expect(client.getServerVersion()?.name).toBe('platform-api');
      const instructions = client.getInstructions()!;
      expect(instructions.indexOf('find_tools')).toBeLessThan(instructions.indexOf('get_tool_schema'));
      expect(instructions.indexOf('get_tool_schema')).toBeLessThan(instructions.indexOf('call_tool'));

      const listed = await client.listTools();
      expect(listed.tools.map((x) => x.name).sort()).toEqual(['call_tool', 'find_tools', 'get_tool_schema']);
      const full = await client.listTools({ full: true } as never);
      const names = full.tools.map((x) => x.name);
      for (const n of ['me.get', 'projects.list', 'projects.create', 'tasks.list', 'tasks.create', 'tasks.update', 'specs.list',
        'documents.search', 'documents.get', 'documents.create', 'documents.update', 'notifications.list']) expect(names).toContain(n);

      const found = await client.callTool({ name: 'find_tools', arguments: { query: 'create a task' } });
      expect(structured(found).tools[0].name).toBe('tasks.create');
      const schema = await client.callTool({ name: 'get_tool_schema', arguments: { name: 'tasks.create' } });
      expect(structured(schema).inputSchema.required).toEqual(expect.arrayContaining(['projectId', 'title']));
      expect(structured(schema).scope).toBe('mcp:tasks.write');

      const created = await client.callTool({ name: 'call_tool', arguments: { name: 'projects.create', arguments: { name: 'Agent project' } } });
      expect(created.isError).toBeFalsy();
      const project = structured(created);
      expect(project.name).toBe('Agent project');
      const got = await client.callTool({ name: 'projects.get', arguments: { projectId: project.id } });
      expect(structured(got).id).toBe(project.id);
      const list = await client.callTool({ name: 'projects.list', arguments: {} });
      expect(structured(list).items.map((p: { id: string }) => p.id)).toContain(project.id);

      const task = structured(await client.callTool({ name: 'tasks.create', arguments: { projectId: project.id, title: 'Write the agent', priority: 'high' } }));
      expect(task).toMatchObject({ title: 'Write the agent', priority: 'high', project_id: project.id });
      const updated = structured(await client.callTool({ name: 'call_tool', arguments: { name: 'tasks.update', arguments: { taskId: task.id, status: 'done' } } }));
      expect(updated.status_key).toBe('done');
      const tasks = structured(await client.callTool({ name: 'tasks.list', arguments: { projectId: project.id } }));
      expect(tasks.items).toHaveLength(1);
      expect(tasks.pagination).toMatchObject({ total: 1, has_more: false });

      const spec = structured(await client.callTool({ name: 'specs.create', arguments: { projectId: project.id, title: 'Agent spec', content: '# Goal\nShip it.' } }));
      const resources = await client.listResources();
      const uri = `platform://specs/${spec.spec_id}`;
      expect(resources.resources.map((r) => r.uri)).toContain(uri);
      const read = await client.readResource({ uri });
      expect(read.contents[0]).toMatchObject({ uri, mimeType: 'text/markdown', text: '# Goal\nShip it.' });
      const templates = await client.listResourceTemplates();
      expect(templates.resourceTemplates.map((r) => r.uriTemplate)).toContain('platform://specs/{id}');

      // A service refusal is a tool execution error the model can read.
      const missing = await client.callTool({ name: 'projects.get', arguments: { projectId: '00000000-0000-7000-8000-000000000000' } });
      expect(missing.isError).toBe(true);
      expect(structured(missing).error.code).toBe('NOT_FOUND');
      await client.ping();
    } finally {
      await transport.terminateSession();
      await client.close();
    }
  });

  it('creates, reads, updates and searches documents; lists notifications; documents are resources', async () => {
    const key = await owner.apiKey(['mcp:*']);
    const { client } = await connect(key);
    try {
      const found = structured(await client.callTool({ name: 'find_tools', arguments: { query: 'search documents' } }));
      expect(found.tools[0].name).toBe('documents.search');
      const doc = structured(await client.callTool({ name: 'documents.create', arguments: { title: 'Runbook', content: 'Restart the zebrafish service nightly.' } }));
      expect(doc).toMatchObject({ title: 'Runbook', content_type: 'markdown' });
      const read = structured(await client.callTool({ name: 'call_tool', arguments: { name: 'documents.get', arguments: { id: doc.id } } }));
      expect(read.content).toBe('Restart the zebrafish service nightly.');
      const updated = structured(await client.callTool({ name: 'documents.update', arguments: { id: doc.id, title: 'Ops runbook' } }));
      expect(updated.title).toBe('Ops runbook');
      // Indexing runs as a job after the write; search finds the document once it is indexed.
      let hits: Array<{ id: string }> = [];
      for (let i = 0; i < 50 && !hits.length; i++) {
        hits = structured(await client.callTool({ name: 'documents.search', arguments: { search: 'zebrafish' } })).items;
        if (!hits.length) await new Promise((r) => setTimeout(r, 100));
      }
      expect(hits.map((h) => h.id)).toContain(doc.id);
      // An agent's list results carry the excerpt, not the content (REST list items have both): documents.get reads it.
      const hit = (hits as Array<{ id: string; excerpt?: string; content?: string }>).find((h) => h.id === doc.id)!;
      expect({ excerpt: hit.excerpt, content: hit.content }).toEqual({ excerpt: 'Restart the zebrafish service nightly.', content: undefined });
      const listed = structured(await client.callTool({ name: 'documents.list', arguments: {} })).items as Array<{ id: string; excerpt?: string; content?: string }>;
      expect(listed.filter((d) => d.id === doc.id).map((d) => [d.excerpt, d.content])).toEqual([['Restart the zebrafish service nightly.', undefined]]);
      const resource = await client.readResource({ uri: `platform://documents/${doc.id}` });
      expect(resource.contents[0]).toMatchObject({ mimeType: 'text/markdown', text: 'Restart the zebrafish service nightly.' });
      const all = await client.listResources();
      expect(all.resources.map((r) => r.uri)).toContain(`platform://documents/${doc.id}`);
      const inbox = structured(await client.callTool({ name: 'notifications.list', arguments: {} }));
      expect(inbox).toHaveProperty('unread_count');
      expect(Array.isArray(inbox.items)).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('enforces scopes: mcp:projects.read lists but cannot create (-32603 naming the scope)', async () => {
    const key = await owner.apiKey(['mcp:projects.read']);
    const { client } = await connect(key);
    try {
      const list = await client.callTool({ name: 'projects.list', arguments: {} });
      expect(list.isError).toBeFalsy();
      const denied = await client.callTool({ name: 'projects.create', arguments: { name: 'Nope' } }).catch((e) => e);
      expect(denied).toBeInstanceOf(McpError);
      expect(denied.code).toBe(-32603);
      expect(denied.message).toContain('mcp:projects.write');
      const viaMeta = await client.callTool({ name: 'call_tool', arguments: { name: 'projects.create', arguments: { name: 'Nope' } } }).catch((e) => e);
      expect(viaMeta.code).toBe(-32603);
      expect(viaMeta.message).toContain('mcp:projects.write');
    } finally {
      await client.close();
    }
  });

  it('an ended session answers 404 and the SDK client can start a new one', async () => {
    const key = await owner.apiKey(['mcp:*']);
    const { client, transport } = await connect(key);
    const sid = transport.sessionId!;
    await transport.terminateSession();
    const res = await fetch(`${base}/v1/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(res.status).toBe(404);
    expect((await res.json()).error.code).toBe(-32001);
    await client.close();
    const again = await connect(key);
    expect(again.transport.sessionId).not.toBe(sid);
    await again.client.close();
  });
});

describe('MCP without the handshake (stateless, raw fetch)', () => {
  async function post(key: string, body: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`${base}/v1/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, type: res.headers.get('content-type'), body: res.status === 202 ? null : await res.json() };
  }

  it('lists, finds, reads schemas, calls tools and reads resources, one JSON response per POST', async () => {
    const key = await owner.apiKey(['mcp:*']);
    const tools = await post(key, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { full: true } });
    expect(tools.status).toBe(200);
    expect(tools.type).toMatch(/^application\/json/);
    expect(tools.body.result.tools.length).toBeGreaterThan(10);
    const found = await post(key, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'find_tools', arguments: { query: 'list projects' } } });
    expect(found.body.result.structuredContent.tools[0].name).toBe('projects.list');
    const schema = await post(key, { jsonrpc: '2.0', id: 'three', method: 'tools/call', params: { name: 'get_tool_schema', arguments: { name: 'projects.create' } } });
    expect(schema.body.id).toBe('three');
    expect(schema.body.result.structuredContent.inputSchema.properties.name).toBeDefined();
    const created = await post(key, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'call_tool', arguments: { name: 'projects.create', arguments: { name: 'Stateless project' } } } });
    const project = created.body.result.structuredContent;
    const spec = await post(key, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'specs.create', arguments: { projectId: project.id, title: 'S', content: 'body' } } });
    const uri = `platform://specs/${spec.body.result.structuredContent.spec_id}`;
    const read = await post(key, { jsonrpc: '2.0', id: 6, method: 'resources/read', params: { uri } });
    expect(read.body.result.contents[0].text).toBe('body');
    const note = await post(key, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(note.status).toBe(202);
  });
});

describe('examples/mcp-agent.mjs', () => {
  it('runs an agent session end to end against the server', async () => {
    const key = await owner.apiKey(['mcp:*']);
    const { stdout } = await promisify(execFile)(process.execPath, ['examples/mcp-agent.mjs'], {
      env: { ...process.env, PLATFORM_URL: base, PLATFORM_API_KEY: key }, timeout: 20_000,
    });
    expect(stdout).toContain('find_tools "create a project"');
    expect(stdout).toContain('projects.create');
    expect(stdout.trim().endsWith('OK')).toBe(true);
  });
});
