/** The four resolutions of the metrics engine. */
export const TIERS = [
  { name: 'second', seconds: 1 },
  { name: 'minute', seconds: 60 },
  { name: 'hour', seconds: 3600 },
  { name: 'day', seconds: 86400 },
] as const;

export type TierName = (typeof TIERS)[number]['name'];
export const TIER_NAMES = TIERS.map((tier) => tier.name) as TierName[];
export const tierSeconds = (name: TierName): number => TIERS.find((tier) => tier.name === name)!.seconds;

/** How many points each tier keeps. */
export type Retention = Record<TierName, number>;
