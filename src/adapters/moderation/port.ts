/** Verdict of the safety gate over a piece of user content. */
export interface ModerationVerdict {
  flagged: boolean;
  /** Names of the rules or provider categories that matched. */
  categories: string[];
}

/** The safety gate that content passes before it is stored (spec 4.5, CONTENT_POLICY_VIOLATION). */
export interface ModerationPort {
  readonly name: string;
  check(texts: string[]): Promise<ModerationVerdict>;
}
