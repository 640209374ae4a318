import { Type, type TSchema } from 'typebox';

/** Spec 2.1 success envelope. */
export const ok = <T>(data: T) => ({ success: true as const, data });

export interface Pagination { total: number; limit: number; offset: number; has_more: boolean }

/** Spec 2.1 list envelope: next page is offset + limit; has_more says whether to ask. */
export const okList = <T>(data: T, p: { total: number; limit: number; offset: number }) => ({
  success: true as const,
  data,
  pagination: { total: p.total, limit: p.limit, offset: p.offset, has_more: p.offset + p.limit < p.total } satisfies Pagination,
});

export const PaginationSchema = Type.Object({
  total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer(), has_more: Type.Boolean(),
});

export const ErrorEnvelope = Type.Object({
  success: Type.Literal(false),
  error: Type.Object({
    code: Type.String(),
    message: Type.String(),
    details: Type.Optional(Type.Object({}, { additionalProperties: true })),
  }),
}, { $id: 'ErrorEnvelope', description: 'Spec part 7 error envelope; branch on error.code' });

export const Envelope = <T extends TSchema>(data: T) => Type.Object({ success: Type.Literal(true), data });
export const ListEnvelope = <T extends TSchema>(data: T) =>
  Type.Object({ success: Type.Literal(true), data, pagination: PaginationSchema });
