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

let cached: PlanTierInfo[] | null = null;

/** Public plan tiers; PRICING_FILE (JSON array of PlanTierInfo) replaces the defaults. */
export function planTiers(): PlanTierInfo[] {
  if (!cached) cached = process.env.PRICING_FILE ? JSON.parse(readFileSync(process.env.PRICING_FILE, 'utf8')) : DEFAULT_TIERS;
  return cached!;
}

export const tierLimits = (tier: string) => planTiers().find((t) => t.tier === tier)?.limits ?? { max_projects: null, max_members: null, credits_monthly: null };
