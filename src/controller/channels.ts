/**
 * PostgreSQL NOTIFY channels that carry work between controller processes. A notification is only a hint: what
 * it points at is read from the tables, and a one-second tick covers any notification lost in a reconnect.
 */
export const CHANNELS = {
  /** `{"rollout": id, "wave": n}`: a wave opened; whoever holds a connection of its appliances nudges it. */
  nudge: 'bulwark_fleet_nudge',
  /** an appliance id: revoked; whoever holds its connection closes it. */
  revoke: 'bulwark_fleet_revoke',
  /** a rollout id: a target reported; whoever takes the rollout's row lock first advances it. */
  rollout: 'bulwark_fleet_rollout',
} as const;
