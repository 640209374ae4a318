import type { FastifyRequest } from 'fastify';
import type { Feature } from '../config.js';
import type { Principal } from '../auth/principal.js';
import type { ServiceContext } from '../context.js';

export type CredentialKind = 'user' | 'api_key';

/** Per-route needs, declared in the route's `config` and enforced by one core hook (see http/guard.ts). */
export interface RouteNeeds {
  /** public: no credential read; required (default): 401 without one. */
  auth?: 'public' | 'required';
  /** Which credential kinds may call; default both. */
  credentials?: CredentialKind[];
  /** API-key scope needed (`<area>:read|write`); `<area>:write` also grants `<area>:read`. */
  scope?: string;
  /** Named permission of the caller's role. */
  permission?: string;
  feature?: Feature;
  /** Needs an active subscription (402 BILLING_SUBSCRIPTION_*). */
  subscription?: boolean;
  /** Needs an MFA step-up within the last 5 minutes (403 MFA_STEPUP_REQUIRED). */
  stepUp?: boolean;
  /**
   * Checked by the guard before the credential (after the rate limit): throws to refuse the request whoever sends
   * it. The MCP transport's Origin rule: a disallowed browser Origin is 403, with or without a credential.
   */
  originCheck?: (req: FastifyRequest) => void;
  /**
   * The body may be left out: no body, an empty one or JSON null reads as `{}`. Otherwise an empty JSON body is
   * 400 INVALID_JSON on a route with a body schema (it is not parseable JSON, spec part 7).
   */
  bodyOptional?: boolean;
  /**
   * A deprecated route (spec 9), by the path that replaces it: every answer, errors included, carries `Deprecation`
   * (RFC 9745, as a legacy key's) and `Link: <successor>; rel="successor-version"`.
   */
  deprecatedBy?: string;
  /** Body media types the route takes, named by the 415 answer (default: application/json). */
  accepts?: string[];
  /**
   * A public route whose handler itself accepts a bearer credential (or another proof, in the query): the guard
   * reads none, and the OpenAPI document lists the bearer credential as optional instead of absent.
   */
  bearerInHandler?: boolean;
  /** Platform root organization only (super_admin role, or the `admin` key scope). */
  rootOnly?: boolean;
  rateLimit?: false | {
    max?: number;
    windowMs?: number;
    /** credential (default) | ip | user: the budget is per this key and per route. */
    key?: 'credential' | 'ip' | 'user';
    /** Refuse with 503 when the limiter store cannot answer (spec: MCP). */
    failClosed?: boolean;
  };
  /**
   * The body is a protocol message, not a REST body: `jsonrpc` (MCP) answers malformed or invalid bodies with
   * JSON-RPC errors inside HTTP 200 (spec 4.2, part 7), so the route-wide strict-body checks do not apply.
   */
  protocol?: 'jsonrpc';
  /**
   * Headers the route's success answers carry beyond those of every answer (header name -> what it says), for the
   * OpenAPI document only; the handler sets them.
   */
  responseHeaders?: Record<string, string>;
  /**
   * Query parameters the OpenAPI document lists as required although the schema leaves them optional, because the
   * handler checks them itself, after what must be answered first (the credential's 401 for the sheet export, the
   * 426 of a request without Upgrade for the sheet socket), not as the schema's 400.
   */
  requiredQuery?: string[];
  /**
   * The kind of row the path's id names: the route-wide safety tests create one with the fixture of this name
   * (test/fixtures), and where the area registered the kind (core/http/path-rows.ts), a refusal by role or scope is
   * 404 when the caller's organization has no such row (another organization's rows are never 403).
   */
  fixture?: string;
}

declare module 'fastify' {
  interface FastifyContextConfig extends RouteNeeds {}
  interface FastifyRequest {
    principal: Principal | null;
    ctx: ServiceContext;
  }
}
