import { describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { forSerialization } from './serialization.js';
import { ProjectOut } from '../../areas/projects/projects.schemas.js';
import { MeOut } from '../../areas/accounts/accounts.schemas.js';

const compile = (schema: unknown) => SerializerSelector()(undefined as never, undefined as never)({ schema, method: 'GET', url: '/', httpStatus: '200' } as never) as (v: unknown) => string;

describe('forSerialization', () => {
  it('turns a nullable primitive (anyOf [X, null]) into one multi-type schema, keeping the format', () => {
    expect(forSerialization(Type.Union([Type.String({ format: 'date-time' }), Type.Null()]))).toEqual({ type: ['string', 'null'], format: 'date-time' });
  });

  it('turns a union of string literals into a string', () => {
    expect(forSerialization(Type.Union([Type.Literal('public'), Type.Literal('private')]))).toEqual({ type: 'string' });
  });

  it('merges integer into number and keeps a union of one type as that type', () => {
    expect(forSerialization({ anyOf: [{ type: 'integer' }, { type: 'number' }, { type: 'null' }] })).toEqual({ type: ['number', 'null'] });
  });

  it('turns a nullable array or object into one multi-type schema', () => {
    expect(forSerialization(Type.Union([Type.Array(Type.String()), Type.Null()]))).toEqual({ type: ['array', 'null'], items: { type: 'string' } });
    expect(forSerialization({ anyOf: [{ type: 'object', properties: { a: { type: 'string' } } }, { type: 'null' }] }))
      .toEqual({ type: ['object', 'null'], properties: { a: { type: 'string' } } });
  });

  it('leaves an anyOf of two objects alone (the serializer must pick the branch by shape)', () => {
    const s = { anyOf: [{ type: 'object', properties: { a: { type: 'string' } } }, { type: 'object', properties: { b: { type: 'number' } } }] };
    expect(forSerialization(s)).toEqual(s);
  });

  it('rewrites nested properties and items, and copies data keywords unchanged', () => {
    const s = Type.Object({ list: Type.Array(Type.Object({ at: Type.Union([Type.String(), Type.Null()]), kind: Type.Literal('x') })) });
    expect(forSerialization(s)).toMatchObject({
      type: 'object',
      properties: { list: { type: 'array', items: { type: 'object', properties: { at: { type: ['string', 'null'] }, kind: { const: 'x', type: 'string' } } } } },
    });
  });

  it('serializes a project exactly as the schema as written does, for set and null fields', () => {
    const base = {
      id: '01a1fe76-3163-7190-b229-98be8aff5c69', org_id: '01a1fe76-3163-7190-b229-98be8aff5c6a', name: 'Apollo "quoted" \u2028', slug: 'apollo',
      prefix: null, visibility: 'internal', category_id: null, owner_scope: 'org', is_active: true, created_by_user_id: null,
      created_at: '2026-11-21T14:00:00.000Z', updated_at: '2026-11-21T14:00:01.000Z', settings: { theme: { dark: true }, n: 1 },
    };
    const samples = [
      { ...base, description: null, archived_at: null, deleted_at: null },
      { ...base, description: 'Line\nbreak', archived_at: '2026-11-21T15:00:00.000Z', deleted_at: '2026-11-21T16:00:00.000Z', category_id: 'c1', created_by_user_id: 'u1', prefix: 'AP' },
      { ...base, description: null, archived_at: new Date('2026-11-21T15:00:00.000Z'), deleted_at: null },
    ];
    const asWritten = compile(ProjectOut);
    const fast = compile(forSerialization(ProjectOut));
    for (const s of samples) expect(fast(s)).toBe(asWritten(s));
  });

  it('serializes /v1/me exactly as the schema as written does, for both credential kinds', () => {
    const base = {
      user: { id: 'u', email: 'a@b.c', name: 'A' }, role: 'owner', permissions: ['a', 'b'],
      organization: { id: 'o', name: 'O', slug: 'o', plan_tier: 'free', subscription_status: 'active', features: ['documents'],
        session_duration_days: 30, is_root: false, created_at: '2026-11-21T14:00:00.000Z', updated_at: '2026-11-21T14:00:00.000Z' },
    };
    const samples = [
      { ...base, credential_kind: 'api_key', credential: { kind: 'api_key', api_key_id: 'k', scopes: ['projects:read'], legacy: false } },
      { ...base, credential_kind: 'api_key', credential: { kind: 'api_key', api_key_id: 'k', scopes: null, legacy: true } },
      { ...base, credential_kind: 'user', credential: { kind: 'user', session_id: 's', mfa_at: null, legacy: false } },
      { ...base, credential_kind: 'user', credential: { kind: 'user', session_id: 's', mfa_at: '2026-11-21T14:00:00.000Z', legacy: false } },
    ];
    const asWritten = compile(MeOut);
    const fast = compile(forSerialization(MeOut));
    for (const s of samples) expect(fast(s)).toBe(asWritten(s));
  });
});
