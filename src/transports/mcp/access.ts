import { checkNeeds } from '../../core/http/guard.js';
import { scopesAllow } from '../../core/auth/permissions.js';
import { AppError } from '../../core/errors.js';
import type { Principal } from '../../core/auth/principal.js';
import type { RouteNeeds } from '../../core/http/route-config.js';

/** What gates one tool or resource: its fine-grained MCP scope and the needs of the REST route it mirrors. */
export interface Gate {
  name: string;
  /** `mcp:<area>.read|write` */
  scope: string;
  /** The REST route's needs (scope there is the coarse grant `<area>:read|write`). */
  needs: RouteNeeds;
}

/**
 * Spec 5.5: an API key holding `mcp:*`, the tool's fine-grained scope, or its coarse grant may call the tool.
 * Accepted for `mcp:projects.read`: `mcp:*`, `mcp:projects.read`, `mcp:projects.write` (write implies read),
 * `mcp:<tool name>` (one tool only) and the REST route's own scope (`projects:read`, or `projects:write`).
 * A REST route that needs no scope (e.g. GET /v1/me) needs none here either. Sessions and legacy keys
 * (scopes NULL) act with their role, exactly as on REST.
 */
export function mcpScopeAllows(p: Principal, gate: Gate): boolean {
  if (p.kind !== 'api_key' || p.scopes === null) return true;
  const granted = p.scopes;
  if (granted.includes('mcp:*') || granted.includes(gate.scope) || granted.includes(`mcp:${gate.name}`)) return true;
  if (gate.scope.endsWith('.read') && granted.includes(gate.scope.slice(0, -5) + '.write')) return true;
  if (!gate.needs.scope) return true;
  return scopesAllow(granted, gate.needs.scope);
}

/**
 * The one access check for tools/call, call_tool, resources/list and resources/read: the same checkNeeds the
 * REST guard runs, in the same order (credential kind, entitlements, then scope, role and permission), with
 * the MCP scope rule in place of the route's scope, and the organization's `mcp` feature first.
 * Throws the AppError REST would have answered with; the dispatcher turns it into JSON-RPC -32603.
 */
export function checkAccess(p: Principal, gate: Gate): void {
  checkNeeds({ feature: 'mcp' }, p);
  const { scope: _coarse, permission, stepUp, rateLimit: _rl, fixture: _f, ...before } = gate.needs;
  checkNeeds(before, p);
  if (!mcpScopeAllows(p, gate)) {
    const alternatives = ['mcp:*', ...(gate.needs.scope ? [gate.needs.scope] : [])].join(' or ');
    throw new AppError('FORBIDDEN', `API key lacks the "${gate.scope}" scope (or ${alternatives}) needed by "${gate.name}"`,
      { requiredScope: gate.scope, tool: gate.name });
  }
  checkNeeds({ permission, stepUp }, p);
}

export function isAllowed(p: Principal, gate: Gate): boolean {
  try { checkAccess(p, gate); return true; } catch { return false; }
}
