import { readFileSync } from 'node:fs';

export const PLAN_TIERS = ['academic_free', 'pro', 'team', 'business', 'enterprise'] as const;
export type PlanTier = (typeof PLAN_TIERS)[number];

export interface PlanTierInfo {
  tier: PlanTier; name: string; price_cents_monthly: number | null; currency: string;
  limits: { max_projects: number | null; max_members: number | null; credits_monthly: number | null };
  features: string[];
}

const ALL = ['documents', 'chat', 'iam', 'compliance', 'proof-printout', 'rdp', 'containers', 'mail', 'calendar', 'saas-builder', 'vision', 'mcp'];

const DEFAULT_TIERS: PlanTierInfo[] = [
  { tier: 'academic_free', name: 'Academic', price_cents_monthly: 0, currency: 'usd', limits: { max_projects: 3, max_members: 5, credits_monthly: 100 }, features: ['documents', 'chat', 'calendar', 'mcp'] },
  { tier: 'pro', name: 'Pro', price_cents_monthly: 2900, currency: 'usd', limits: { max_projects: 500, max_members: 25, credits_monthly: 2000 }, features: ALL },
  { tier: 'team', name: 'Team', price_cents_monthly: 9900, currency: 'usd', limits: { max_projects: 2000, max_members: 100, credits_monthly: 10000 }, features: ALL },
  { tier: 'business', name: 'Business', price_cents_monthly: 49900, currency: 'usd', limits: { max_projects: 10000, max_members: 1000, credits_monthly: 100000 }, features: ALL },
  { tier: 'enterprise', name: 'Enterprise', price_cents_monthly: null, currency: 'usd', limits: { max_projects: null, max_members: null, credits_monthly: null }, features: ALL },
];

/**
 * The tiers of a PRICING_FILE, checked: read at start by the configuration, so a missing file or a wrong shape stops
 * the start naming it (read later, it turned GET /v1/pricing and every plan-limit check into 500s).
 */
export function readPricingFile(file: string): PlanTierInfo[] {
  const fail = (what: string): never => { throw new Error(`PRICING_FILE ${file}: ${what}`); };
  let text = '';
  try { text = readFileSync(file, 'utf8'); } catch (err) { fail(`cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`); }
  let tiers: unknown;
  try { tiers = JSON.parse(text); } catch { fail('is not JSON'); }
  if (!Array.isArray(tiers) || tiers.length === 0) return fail('must be a JSON array of plan tiers');
  const count = (v: unknown) => v === null || (Number.isInteger(v) && (v as number) >= 0);
  tiers.forEach((t: Record<string, unknown>, i) => {
    const at = `tier ${i}`;
    if (!t || typeof t !== 'object') fail(`${at} must be an object`);
    if (!(PLAN_TIERS as readonly unknown[]).includes(t.tier)) fail(`${at}: "tier" must be one of ${PLAN_TIERS.join(', ')}`);
    if (typeof t.name !== 'string' || !t.name) fail(`${at}: "name" must be a non-empty string`);
    if (!count(t.price_cents_monthly)) fail(`${at}: "price_cents_monthly" must be a whole number of 0 or more, or null`);
    if (typeof t.currency !== 'string') fail(`${at}: "currency" must be a string`);
    const limits = t.limits as Record<string, unknown> | null;
    if (!limits || typeof limits !== 'object' || !['max_projects', 'max_members', 'credits_monthly'].every((k) => count(limits[k]))) {
      fail(`${at}: "limits" must hold max_projects, max_members and credits_monthly, each a whole number of 0 or more, or null`);
    }
    if (!Array.isArray(t.features) || !t.features.every((f) => typeof f === 'string')) fail(`${at}: "features" must be an array of strings`);
  });
  return tiers as PlanTierInfo[];
}

let cached: PlanTierInfo[] | null = null;

/** Public plan tiers; PRICING_FILE (JSON array of PlanTierInfo) replaces the defaults. */
export function planTiers(): PlanTierInfo[] {
  if (!cached) cached = process.env.PRICING_FILE ? readPricingFile(process.env.PRICING_FILE) : DEFAULT_TIERS;
  return cached!;
}

export const tierLimits = (tier: string) => planTiers().find((t) => t.tier === tier)?.limits ?? { max_projects: null, max_members: null, credits_monthly: null };
