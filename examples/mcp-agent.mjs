#!/usr/bin/env node
// An agent-side MCP session against the Platform API, end to end, with the official MCP SDK client.
//
//   PLATFORM_URL=http://localhost:8080 PLATFORM_API_KEY=svc_live_... node examples/mcp-agent.mjs
//
// The key needs "mcp:*" (or mcp:projects.write, mcp:tasks.write, mcp:specs.write, mcp:documents.write; or the
// coarse projects:write and documents:write). What it does, as an agent would: connect (initialize, session),
// discover tools with find_tools, read a schema with get_tool_schema, call tools through call_tool and
// directly, read a resource, then end the session.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const base = (process.env.PLATFORM_URL ?? 'http://localhost:8080').replace(/\/+$/, '');
const apiKey = process.env.PLATFORM_API_KEY;
if (!apiKey) {
  console.error('Set PLATFORM_API_KEY to an API key (svc_live_...) with the mcp:* scope, and PLATFORM_URL to the server.');
  process.exit(2);
}

const log = (label, value) => console.log(`${label}:`, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
/** Tools answer with structuredContent; a tool execution error has isError and an error object. */
function data(result, what) {
  if (result.isError) throw new Error(`${what} failed: ${result.content?.[0]?.text}`);
  return result.structuredContent;
}

const transport = new StreamableHTTPClientTransport(new URL(`${base}/v1/mcp`), {
  requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
});
const client = new Client({ name: 'platform-example-agent', version: '1.0.0' });

try {
  await client.connect(transport);
  log('connected', { server: client.getServerVersion(), protocolVersion: transport.protocolVersion, session: transport.sessionId });
  log('instructions', client.getInstructions());

  const { tools } = await client.listTools();
  log('meta-tools', tools.map((t) => t.name));

  // 1) discover
  const found = data(await client.callTool({ name: 'find_tools', arguments: { query: 'create a project', limit: 3 } }), 'find_tools');
  log('find_tools "create a project"', found.tools.map((t) => `${t.name} (${t.scope})`));
  const createProject = found.tools[0].name;

  // 2) read the schema
  const schema = data(await client.callTool({ name: 'get_tool_schema', arguments: { name: createProject } }), 'get_tool_schema');
  log(`schema of ${createProject}`, { required: schema.inputSchema.required, properties: Object.keys(schema.inputSchema.properties) });

  // 3) call through call_tool ...
  const project = data(await client.callTool({ name: 'call_tool', arguments: { name: createProject, arguments: { name: `Agent demo ${new Date().toISOString()}` } } }), createProject);
  log('project', { id: project.id, name: project.name, slug: project.slug });

  // ... or directly by name with tools/call: the same permission check applies.
  const task = data(await client.callTool({ name: 'tasks.create', arguments: { projectId: project.id, title: 'Draft the plan', priority: 'high' } }), 'tasks.create');
  log('task', { id: task.id, title: task.title, status: task.status_key });
  const done = data(await client.callTool({ name: 'tasks.update', arguments: { taskId: task.id, status: 'done' } }), 'tasks.update');
  log('task updated', { id: done.id, status: done.status_key });
  const list = data(await client.callTool({ name: 'tasks.list', arguments: { projectId: project.id } }), 'tasks.list');
  log('tasks', list.items.map((t) => `${t.title} [${t.status_key}]`));

  const spec = data(await client.callTool({ name: 'specs.create', arguments: { projectId: project.id, title: 'Demo spec', content: '# Demo\nWritten by an agent.' } }), 'specs.create');
  const doc = data(await client.callTool({ name: 'documents.create', arguments: { title: 'Agent notes', content: 'Notes taken by the demo agent.', project_id: project.id } }), 'documents.create');
  log('spec and document', { spec: spec.spec_id, document: doc.id });

  // Resources: specs and documents have stable URIs.
  const { resources } = await client.listResources();
  log('resources (first page)', resources.slice(0, 5).map((r) => r.uri));
  const read = await client.readResource({ uri: `platform://specs/${spec.spec_id}` });
  log('resource text', read.contents[0].text);

  // A refusal the agent can read and act on: unknown ids are tool errors, missing scopes JSON-RPC errors.
  const missing = await client.callTool({ name: 'projects.get', arguments: { projectId: '00000000-0000-7000-8000-000000000000' } });
  log('expected tool error', missing.content[0].text);

  await transport.terminateSession();
  log('session', 'ended');
  console.log('OK');
} catch (err) {
  console.error('agent failed:', err.message ?? err);
  process.exitCode = 1;
} finally {
  await client.close();
}
