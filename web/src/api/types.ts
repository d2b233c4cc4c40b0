/** The current identity (GET /auth/me). */
export interface Me {
  id: string;
  username: string;
  email: string | null;
  role: string | null;
  credential: string;
  permissions: string[];
  totp_enabled: boolean;
  auth_provider: string;
}

export interface LoginAnswer {
  totp_required: boolean;
  challenge?: string;
  access_token?: string;
  refresh_token?: string;
}

export interface LoginOption {
  name: string;
  provider_type: string;
}

/** GET /pending: what the stored configuration changes against what runs. */
export interface Pending {
  firewall: boolean;
  nat: boolean;
  dns?: boolean;
  changes: Record<string, { added: string[]; changed: string[]; removed: string[] }>;
  applied_at: string | null;
  /** Enabled transit assertions the stored configuration would break once applied (POST /reload refuses it unless forced). */
  broken_assertions?: BrokenAssertion[];
}

export interface BrokenAssertion {
  id: string;
  name: string;
  expect: string;
  outcome: string;
  decided_by: string;
  rule_id: string | null;
  detail: string;
}

export interface JudgedAssertion {
  id: string;
  name: string;
  kind: 'transit' | 'probe';
  result: { holds: boolean; outcome: string; decided_by: string; detail: string };
}

export interface CommitConfirmStatus {
  active: boolean;
  expires_at: string | null;
  seconds_remaining: number;
  timeout_seconds: number | null;
  rollback_version: number | null;
  started_by: string | null;
  auto_confirm?: boolean;
  /** The assertions checked after the window's apply. */
  assertions?: { state: 'running' | 'held' | 'failed'; results: JudgedAssertion[] } | null;
  last: { outcome: string; at: string; error?: string; reason?: string } | null;
}

export interface PortRange {
  start: number;
  end: number;
}

export interface Rule {
  id: string;
  priority: number;
  action: string;
  direction: string;
  ip_version: string;
  interface: string | null;
  protocol: string;
  rule_match: { src_addr: string; src_port: PortRange | null; dst_addr: string; dst_port: PortRange | null };
  src_invert: boolean;
  dst_invert: boolean;
  log: boolean;
  label: string | null;
  description: string | null;
  status: string;
  schedule_id: string | null;
  /** Totals of the hit counters (fresh within a few seconds), when the API answers them. */
  hits?: { packets: number; bytes: number };
}

/** A record of any collection: the console shows these generically. */
export type Row = Record<string, unknown> & { id?: string };
