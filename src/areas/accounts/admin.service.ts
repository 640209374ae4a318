import { AppError, notFound } from '../../core/errors.js';
import { actor, type ServiceContext } from '../../core/context.js';
import { uuidv7 } from '../../core/ids.js';
import { audit } from '../../core/audit.js';
import { randomB64url, randomHex, sha256Hex } from '../../core/crypto.js';
import { accountsRepo, orgView, type OrgRow } from './accounts.repo.js';
import { isUuid } from '../../core/ids.js';
import type { EntitlementsInput } from './accounts.schemas.js';

const ORG_COLS = `o.id, o.name, o.slug, o.plan_tier, o.subscription_status, o.features, o.settings, o.session_duration_days, o.is_root, o.deleted_at, o.created_at, o.updated_at`;

export async function listAllOrganizations(ctx: ServiceContext, page: { limit: number; offset: number }) {
  actor(ctx);
  const sql = ctx.platform.db.sys;
  const items = await sql.query<OrgRow>(`SELECT ${ORG_COLS} FROM organizations o WHERE o.deleted_at IS NULL ORDER BY o.created_at, o.id LIMIT $1 OFFSET $2`, [page.limit, page.offset]);
  const total = (await sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM organizations WHERE deleted_at IS NULL`))!.n;
  return { items: items.map(orgView), total };
}

/** Sets plan tier, subscription status and features; every credential of the organization sees it at once. */
export async function setEntitlements(ctx: ServiceContext, orgId: string, input: EntitlementsInput) {
  const row = await ctx.platform.db.systemTx(async (sql) => {
    const org = await sql.one<OrgRow>(`UPDATE organizations AS o SET plan_tier = COALESCE($2, plan_tier), subscription_status = COALESCE($3, subscription_status),
        features = COALESCE($4, features), updated_at = now() WHERE id = $1 AND deleted_at IS NULL RETURNING ${ORG_COLS}`,
      [orgId, input.plan_tier ?? null, input.subscription_status ?? null, input.features ?? null]);
    if (!org) throw notFound('Organization');
    await audit(sql, ctx, { orgId, action: 'organization.entitlements_changed', targetType: 'organization', targetId: orgId, details: { ...input } });
    return org;
  });
  ctx.platform.credentials.invalidate();
  return orgView(row);
}

/** A SCIM bearer token for one organization (spec 5.9): shown once, stored hashed. */
export async function createScimToken(ctx: ServiceContext, orgId: string, name: string) {
  return ctx.platform.db.systemTx(async (sql) => {
    const org = await sql.one(`SELECT 1 FROM organizations WHERE id = $1 AND deleted_at IS NULL`, [orgId]);
    if (!org) throw notFound('Organization');
    const prefix = randomHex(4);
    const token = `scim_${prefix}_${randomB64url(32)}`;
    const row = await sql.one<{ id: string; name: string; created_at: string }>(`INSERT INTO scim_tokens (org_id, id, name, prefix, token_hash, created_by_user_id)
      VALUES ($1, $2, $3, $4, $5, $6) RETURNING id, name, created_at`, [orgId, uuidv7(), name, prefix, sha256Hex(token), ctx.principal?.userId ?? null]);
    await audit(sql, ctx, { orgId, action: 'scim_token.created', targetType: 'scim_token', targetId: row!.id });
    return { ...row!, token };
  });
}

/** An organization by id or slug (the CLI's `--org`); deleted ones are not found. */
export async function resolveOrganization(ctx: ServiceContext, idOrSlug: string): Promise<ReturnType<typeof orgView>> {
  const byId = isUuid(idOrSlug);
  const row = await ctx.platform.db.sys.one<OrgRow>(`SELECT ${ORG_COLS} FROM organizations o WHERE ${byId ? 'o.id = $1::uuid' : 'o.slug = $1'} AND o.deleted_at IS NULL`, [idOrSlug]);
  if (!row) throw new AppError('NOT_FOUND', `No organization with ${byId ? 'id' : 'slug'} "${idOrSlug}"`, { org: idOrSlug });
  return orgView(row);
}

/** A user by e-mail (case-insensitive), for offline administration. */
export async function resolveUserByEmail(ctx: ServiceContext, email: string): Promise<{ id: string; email: string; name: string }> {
  const user = await accountsRepo.userByEmail(ctx.platform.db.sys, email.trim());
  if (!user) throw new AppError('NOT_FOUND', `No account with the e-mail "${email}"; create it with "platform user create"`, { email });
  return { id: user.id, email: user.email, name: user.name };
}
