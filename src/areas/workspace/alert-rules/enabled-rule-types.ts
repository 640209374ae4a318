import type { Database } from '../../../core/db/database.js';
import { NotifiedOrgCache } from '../../../core/db/notified-cache.js';
import { alertRulesRepo } from './alert-rules.repo.js';
import { ruleWants } from './event-types.js';

/** Announced by migration 0050's trigger on every change to alert_rules: the organization id, or `*`. */
export const ALERT_RULES_CHANNEL = 'alert_rules_changed';

/**
 * Which event types each organization has enabled alert rules for, so that an event no rule wants (almost all of
 * them) costs no database read. An organization's set is read once, then kept until a change to its rules is
 * announced (by this process or any other): core NotifiedOrgCache says when memory may answer.
 */
export class EnabledRuleTypes {
  private readonly cache: NotifiedOrgCache<ReadonlySet<string>>;

  constructor(private readonly db: Database) {
    this.cache = new NotifiedOrgCache(db, ALERT_RULES_CHANNEL);
  }

  async has(orgId: string, eventType: string): Promise<boolean> {
    const types = await this.cache.get(orgId, '', async () =>
      new Set(await this.db.tenant(orgId, (sql) => alertRulesRepo.enabledEventTypes(sql, orgId))));
    for (const t of types!) if (ruleWants(t, eventType)) return true;
    return false;
  }

  /** Drops an organization's entry (`*`: all); called directly after this process commits a change. */
  forget(orgId: string): void {
    this.cache.forget(orgId);
  }
}

const byDb = new WeakMap<Database, EnabledRuleTypes>();

/** The platform's one instance (one LISTEN subscription per database). */
export function enabledRuleTypes(db: Database): EnabledRuleTypes {
  let c = byDb.get(db);
  if (!c) { c = new EnabledRuleTypes(db); byDb.set(db, c); }
  return c;
}
