import type { Role } from './permissions.js';

export interface OrgSnapshot {
  id: string;
  name: string;
  slug: string;
  planTier: string;
  subscriptionStatus: string;
  features: string[];
  isRoot: boolean;
  sessionDurationDays: number;
  createdAt: string;
  updatedAt: string;
}

/** Who is calling, resolved from the credential; the organization comes from here and nowhere else. */
export interface Principal {
  kind: 'user' | 'api_key';
  userId: string;
  email: string;
  name: string;
  orgId: string;
  org: OrgSnapshot;
  role: Role;
  permissions: ReadonlySet<string>;
  /** API keys: granted scopes; null for a legacy key (full role) and for user sessions. */
  scopes: readonly string[] | null;
  legacyKey: boolean;
  apiKeyId?: string;
  /** API keys: when the key expires (a key cannot create a key that outlives it). */
  keyExpiresAt?: string;
  sessionId?: string;
  mfaAt?: string | null;
  tokenVersion?: number;
}
