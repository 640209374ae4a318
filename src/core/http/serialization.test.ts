import { describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { forSerialization } from './serialization.js';
import { ProjectOut } from '../../areas/projects/projects.schemas.js';

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

  it('leaves an anyOf with an object member alone (the serializer must pick the branch by shape)', () => {
    const s = { anyOf: [{ type: 'object', properties: { a: { type: 'string' } } }, { type: 'null' }] };
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
});
