/**
 * Actors (§7) and trust tiers (§5.3). The tier comes from `verified` alone: no verification is `unverified`,
 * only non-human verifiers `machine-confirmed`, any `human:<id>` `human-reviewed`. Tiers are advisory signals
 * for the model, not access control.
 */
export const TRUST_TIERS = ['unverified', 'machine-confirmed', 'human-reviewed'] as const;
/** How far a concept was checked: by nobody, by a machine, or by a person. */
export type TrustTier = (typeof TRUST_TIERS)[number];

/**
 * `team:` is not in the spec's list, but real bundles (acme_retail) use it for source authors; it is accepted,
 * counted as non-human, and linted as a warning.
 */
export type ActorKind = 'human' | 'process' | 'team' | 'agent' | 'unknown';

export function actorKind(actor: string): ActorKind {
  if (/^human:\S+$/.test(actor)) return 'human';
  if (/^process:\S+$/.test(actor)) return 'process';
  if (/^team:\S+$/.test(actor)) return 'team';
  if (/^[^\s/:]+\/\S+$/.test(actor)) return 'agent';
  return 'unknown';
}

/** The tier a concept's verifiers give it: a person's review above a machine's check above none. */
export function trustTier(verifiers: ReadonlyArray<{ by: string }>): TrustTier {
  if (verifiers.length === 0) return 'unverified';
  return verifiers.some((v) => actorKind(v.by) === 'human') ? 'human-reviewed' : 'machine-confirmed';
}

export function trustRank(tier: TrustTier): number {
  return TRUST_TIERS.indexOf(tier);
}

export function isTrustTier(value: unknown): value is TrustTier {
  return typeof value === 'string' && (TRUST_TIERS as readonly string[]).includes(value);
}
