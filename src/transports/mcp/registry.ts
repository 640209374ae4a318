import type { ValidateFunction, ErrorObject } from 'ajv';
import { newAjv } from '../../core/http/validation.js';
import type { RegisteredRoute } from '../../core/http/openapi.js';
import type { RouteNeeds } from '../../core/http/route-config.js';
import { allowedLiterals, oneOfMessage } from '../../core/http/literal-unions.js';
import { formatUnionPhrase } from '../../core/http/error-handler.js';
import type { ToolDef } from './tools/define.js';
import type { Gate } from './access.js';

export interface Tool extends Gate {
  def: ToolDef;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  validate: ValidateFunction;
  /** snake_case spellings accepted for the camelCase path ids (`project_id` for `projectId`): `snake -> camel`. */
  argAliases: Record<string, string>;
  /** Stemmed words of the name, description and keywords, for find_tools. */
  nameWords: string[];
  textWords: Set<string>;
}

const TOOL_NAME_RE = /^[A-Za-z0-9_.-]{1,128}$/;
type Json = Record<string, unknown>;

/** Deep copy without `$id` (several tools embed the same TypeBox schema; one Ajv must not see an id twice). */
function clean(v: unknown): any {
  if (Array.isArray(v)) return v.map(clean);
  if (v && typeof v === 'object') {
    const out: Json = {};
    for (const [k, x] of Object.entries(v)) if (k !== '$id') out[k] = clean(x);
    return out;
  }
  return v;
}

const isObjectSchema = (s: unknown): s is { properties: Json; required?: string[]; minProperties?: number } =>
  !!s && typeof s === 'object' && (s as Json).type === 'object' && typeof (s as Json).properties === 'object';

/**
 * Path ids keep the route's camelCase names (`projectId`) while every other argument is snake_case, as REST bodies
 * are; an agent that writes `project_id` means the same id. Each camelCase argument whose snake_case spelling is not
 * an argument of its own is accepted in that spelling too.
 */
export function snakeAliases(inputSchema: Json): Record<string, string> {
  const props = Object.keys((inputSchema.properties ?? {}) as Json);
  const aliases: Record<string, string> = {};
  for (const name of props) {
    const snake = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    if (snake !== name && !props.includes(snake)) aliases[snake] = name;
  }
  return aliases;
}

/** One strict object from a route's path params, query string and body: the tool's arguments. */
export function inputFromRoute(schema: Json | undefined): Json {
  const properties: Json = {};
  const required: string[] = [];
  let anyOf: Json[] | undefined;
  for (const part of ['params', 'querystring', 'body'] as const) {
    const s = schema?.[part];
    if (!s) continue;
    if (isObjectSchema(s)) {
      Object.assign(properties, clean(s.properties));
      required.push(...(s.required ?? []));
      if (part === 'body' && s.minProperties) anyOf = Object.keys(s.properties).map((k) => ({ required: [k] }));
    } else if (part === 'body') {
      properties.body = clean(s);
      required.push('body');
    }
  }
  return { type: 'object', properties, ...(required.length ? { required: [...new Set(required)] } : {}), additionalProperties: false, ...(anyOf ? { anyOf } : {}) };
}

const SYNONYMS: Record<string, string[]> = {
  create: ['add', 'new', 'make', 'insert', 'write', 'post'],
  list: ['find', 'search', 'show', 'all', 'browse', 'enumerate', 'index', 'query'],
  get: ['read', 'show', 'fetch', 'view', 'open', 'detail', 'one', 'lookup'],
  update: ['edit', 'change', 'modify', 'set', 'rename', 'patch', 'assign', 'move', 'status', 'complete', 'close'],
  delete: ['remove', 'archive', 'destroy', 'drop'],
  search: ['find', 'query', 'lookup', 'look', 'full', 'text'],
};
const STOP_WORDS = new Set(['a', 'an', 'the', 'to', 'of', 'for', 'in', 'on', 'with', 'and', 'or', 'by', 'from', 'i', 'want', 'please', 'some', 'my']);
const REVERSE = new Map<string, string[]>();
for (const [canon, words] of Object.entries(SYNONYMS)) for (const w of words) REVERSE.set(w, [...(REVERSE.get(w) ?? []), canon]);

/** Lower-case words with a crude plural stem, so "tasks" finds tasks.list and "project" finds projects.get. */
export function words(text: string): string[] {
  return text.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean).map((w) => (w.length > 3 && w.endsWith('ies') ? w.slice(0, -3) + 'y'
    : w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w));
}

/** The tools of every area, resolved against the registered REST routes for their needs and schemas. */
export class ToolRegistry {
  private readonly byName = new Map<string, Tool>();

  constructor(defs: ToolDef[], routes: RegisteredRoute[]) {
    const ajv = newAjv(false); // arguments are JSON as sent, like REST bodies
    const routeByKey = new Map(routes.map((r) => [`${r.method} ${r.url}`, r]));
    for (const def of defs) {
      if (!TOOL_NAME_RE.test(def.name) || !def.name.includes('.')) throw new Error(`MCP tool name "${def.name}" must be <area>.<verb> of [A-Za-z0-9_.-]`);
      if (this.byName.has(def.name)) throw new Error(`MCP tool "${def.name}" is defined twice`);
      const route = routeByKey.get(def.route);
      if (!route) throw new Error(`MCP tool "${def.name}" names route "${def.route}", which is not registered`);
      const inputSchema = def.input ? clean(def.input) : inputFromRoute(route.schema);
      const area = def.name.split('.')[0];
      this.byName.set(def.name, {
        def, name: def.name, title: def.title ?? def.name, description: def.description,
        scope: `mcp:${area}.${def.access}`, needs: { ...(route.config as RouteNeeds) },
        inputSchema, validate: ajv.compile(inputSchema), argAliases: snakeAliases(inputSchema),
        nameWords: words(def.name),
        textWords: new Set([...words(def.description), ...words(def.title ?? ''), ...(def.keywords ?? []).flatMap(words)]),
      });
    }
  }

  get(name: string): Tool | undefined { return this.byName.get(name); }
  all(): Tool[] { return [...this.byName.values()]; }

  /** Every fine-grained scope a tool uses (for the protected-resource metadata). */
  scopes(): string[] { return [...new Set(this.all().map((t) => t.scope))].sort(); }

  /**
   * find_tools: each query word (and its synonyms, at half weight) scores on the tool name (area or verb:
   * strongest), then on words of the title, description and keywords. Ties go by name; no match scores 0 and
   * is left out.
   */
  search(query: string, limit: number): Array<{ tool: Tool; score: number }> {
    const q = words(query).filter((w) => !STOP_WORDS.has(w));
    const scored = this.all().map((tool) => {
      let score = 0;
      const hitName = new Set<string>();
      for (const w of q) {
        const variants: Array<[string, number]> = [[w, 1], ...[...(SYNONYMS[w] ?? []), ...(REVERSE.get(w) ?? [])].map((s): [string, number] => [s, 0.5])];
        let best = 0;
        for (const [v, weight] of variants) {
          let s = 0;
          if (tool.nameWords.includes(v)) { s = 5; hitName.add(v); }
          else if (tool.nameWords.some((n) => v.length >= 3 && (n.startsWith(v) || v.startsWith(n)))) s = 3;
          else if (tool.textWords.has(v)) s = 1.5;
          else if (v.length >= 4 && [...tool.textWords].some((t) => t.startsWith(v))) s = 0.5;
          best = Math.max(best, s * weight);
        }
        score += best;
      }
      // Specificity: among equal hits, the tool whose name the query covers best wins (projects.list over
      // projects.categories.list for "list projects").
      if (score > 0) score += 2 * (hitName.size / tool.nameWords.length);
      return { tool, score };
    });
    return scored.filter((s) => s.score > 0).sort((a, b) => b.score - a.score || a.tool.name.localeCompare(b.tool.name)).slice(0, limit);
  }
}

/**
 * What a union of plain values accepts, from its branch errors: `must be one of: "a", "b", null` for literals
 * (allowedLiterals, as the REST errors say it), `must be string or null` for types; null when a branch is more than that.
 */
function unionMessage(branches: ErrorObject[]): string | null {
  const literals = allowedLiterals(branches);
  if (literals) return oneOfMessage(literals);
  const types = branches.length > 0 && branches.every((x) => x.keyword === 'type');
  return types ? `must be ${branches.map((x) => String((x.params as { type: unknown }).type)).join(' or ')}` : null;
}

/** `/channels/0` → `channels.0`: the argument as the message names it. */
const dotted = (instancePath: string) => instancePath.replace(/^\//, '').replace(/\//g, '.');

/** The first Ajv failure in words that name the argument, for the -32602 message. */
export function describeArgErrors(errors: ErrorObject[] | null | undefined, schema?: unknown): { message: string; field: string } {
  // Ajv (allErrors off) reports every branch of a failed anyOf, then the anyOf itself, last: the first error
  // blames one branch ("name is required" for an update without any field, "must be equal to constant" for a
  // value outside a literal union). Such unions are described as a whole; for others (a nullable uuid that is
  // not one) the first branch's error is the useful one.
  const union = [...(errors ?? [])].reverse().find((x) => x.keyword === 'anyOf');
  if (union && !union.instancePath) return { message: 'at least one field to change is required', field: '' };
  if (union) {
    const path = dotted(union.instancePath);
    // A union of string formats (a task's due_date: a date-time, a date alone, or null), said as REST says it.
    const formats = schema !== undefined ? formatUnionPhrase(schema, union.schemaPath) : null;
    if (formats) return { message: `argument "${path}" ${formats.phrase}`, field: path };
    const accepts = unionMessage(errors!.filter((x) => x !== union && x.instancePath === union.instancePath));
    if (accepts) return { message: `argument "${path}" ${accepts}`, field: path };
  }
  const e = errors?.[0];
  if (!e) return { message: 'arguments are invalid', field: '' };
  const path = dotted(e.instancePath);
  if (e.keyword === 'required') {
    const field = [path, (e.params as { missingProperty: string }).missingProperty].filter(Boolean).join('.');
    return { message: `argument "${field}" is required`, field };
  }
  if (e.keyword === 'additionalProperties') {
    const field = [path, (e.params as { additionalProperty: string }).additionalProperty].filter(Boolean).join('.');
    return { message: `unknown argument "${field}"`, field };
  }
  return { message: `argument "${path || '(arguments)'}" ${e.message ?? 'is invalid'}`, field: path };
}
