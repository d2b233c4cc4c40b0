/**
 * GET /cluster/health-summary (wire-format §10): what needs the operator's attention in this node's part of the
 * pair, from the live checks: failing health checks, keepalived or conntrackd not running, lost sync messages,
 * an unreachable peer, a demotion in force, and whether the daemon loopback key (the `daemon-loopback` API key,
 * ha:manage, whose secret the first start writes to <data-dir>/daemon-api.key) is live and its file present.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AppContext } from '../../context.js';
import { DAEMON_KEY_NAME } from '../../auth/identity-service.js';
import { Type, type Static } from 'typebox';
import type { ClusterService } from './service.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const HealthSummary = Type.Object({
  missing_peer_keys: Type.Array(Type.String()),
  loopback_key_missing: Type.Boolean(),
  warnings: Type.Array(Type.String()),
  checks: Type.Array(Type.Object({
    id: Type.String(), name: Type.String(), check_type: Type.String(), enabled: Type.Boolean(),
    healthy: Type.Union([Type.Boolean(), Type.Null()], { description: 'null: the check does not run (disabled, or a standalone node)' }),
    failures: Type.Integer({ description: 'failures in a row' }), detail: Nullable(Type.String()),
  })),
});
export type HealthSummary = Static<typeof HealthSummary>;

/** Whether the daemon loopback key is revoked, expired, or its file is gone. */
function loopbackKeyMissing(context: AppContext): boolean {
  const { apiKeys } = context.identity;
  const live = apiKeys.list().some((key) => key.name === DAEMON_KEY_NAME && apiKeys.liveById(key.id));
  return !live || !existsSync(join(context.config.dataDir, 'daemon-api.key'));
}

export async function healthSummary(service: ClusterService, context: AppContext): Promise<HealthSummary> {
  const status = await service.status();
  const checks = service.checkOutcomes();
  const warnings: string[] = [];
  for (const check of checks) if (check.healthy === false) warnings.push(`health check ${check.name} is failing (${check.detail ?? 'no detail'}): the VRRP priority is lowered`);
  const pair = status.configured_role !== 'standalone';
  const addresses = service.carp.objects().length;
  if (pair && addresses === 0) warnings.push(`the role is ${String(status.configured_role)} but no virtual address is configured: VRRP does not run`);
  if (pair && addresses > 0 && !status.running) warnings.push(`keepalived is not running${status.last_error ? `: ${String(status.last_error)}` : ''}`);
  const sync = status.state_sync as { running: boolean; errors: number | null; last_error: string | null } | null;
  if (sync && !sync.running) warnings.push(`state sync (conntrackd) is not running${sync.last_error ? `: ${sync.last_error}` : ''}`);
  if (sync?.errors) warnings.push(`state sync lost or refused ${sync.errors} message(s) on the sync link`);
  if (status.peer_reachable === false) warnings.push('the state-sync peer does not answer ping');
  const demotion = Number(status.priority_adjustment);
  if (pair && demotion > 0) warnings.push(`this node is demoted (priority lowered by ${demotion}): promote gives it its addresses back`);
  const loopbackMissing = loopbackKeyMissing(context);
  if (loopbackMissing) warnings.push(`the daemon loopback key (API key ${DAEMON_KEY_NAME}) is revoked, expired or its file daemon-api.key is gone`);
  const missingPeerKeys = service.peersWithoutKey();
  for (const peer of missingPeerKeys) warnings.push(`configuration sync with ${peer} lacks a key one side accepts: see GET /cluster/status config_sync.keys`);
  return { missing_peer_keys: missingPeerKeys, loopback_key_missing: loopbackMissing, warnings, checks };
}
