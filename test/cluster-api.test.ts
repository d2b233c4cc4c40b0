/**
 * The /cluster routes on the simulated platform (issue 39 items 1-2): validation answers 400 naming the field,
 * the VRRP password is write-only and sealed at rest, promote/demote move the priority adjustment, health check
 * types that do not run are refused, and the role decides whether VRRP runs at all.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adminApi } from './helpers/admin-api.js';
import { createSimulatedPlatform } from '../src/platform/simulated/index.js';
import type { HaEngine, HaSpec } from '../src/platform/ha.js';
import { conflict } from '../src/core/errors.js';
import { findProgram } from '../src/platform/daemon-tools.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const platform = createSimulatedPlatform();
const applied: (HaSpec | null)[] = [];
/** A virtual address on this interface is refused as keepalived would refuse it (409 with the reason). */
const REFUSED_INTERFACE = 'refused0';
/** The failing-check counts the health checks handed to the engine (they lower the VRRP priority). */
const adjusted: number[] = [];
const ha: HaEngine = {
  ...platform.ha,
  adjust: async (demotion, failing) => {
    adjusted.push(failing);
    return platform.ha.adjust(demotion, failing);
  },
  apply: async (spec) => {
    if (spec?.addresses.some((address) => address.interface === REFUSED_INTERFACE)) throw conflict(`high availability: keepalived refused ${REFUSED_INTERFACE}`);
    applied.push(spec);
    return platform.ha.apply(spec);
  },
};
const api = adminApi({ platform: { ...platform, ha } });

test('virtual addresses: validated, the password write-only and sealed, applied as VRRP once the node has a role', async () => {
  await api.refused('POST', '/api/v1/cluster/carp', { vhid: 1, virtual_ip: 'gateway', prefix: 24, interface: 'eth0', password: 'pw' }, /body\.virtual_ip/);
  await api.refused('POST', '/api/v1/cluster/carp', { vhid: 1, virtual_ip: '10.0.0.1', prefix: 33, interface: 'eth0', password: 'pw' }, /body\.prefix/);
  await api.refused('POST', '/api/v1/cluster/carp', { vhid: 1, virtual_ip: '10.0.0.1', prefix: 24, interface: 'eth0', password: 'longer-than-8' }, /password/);
  await api.refused('POST', '/api/v1/cluster/carp', { vhid: 256, virtual_ip: '10.0.0.1', prefix: 24, interface: 'eth0', password: 'pw' }, /vhid/);
  const created = await api.created('/api/v1/cluster/carp', { vhid: 7, virtual_ip: '10.0.0.1', prefix: 24, interface: 'eth0', password: 'Secr3t' });
  assert.equal('password' in created, false, 'never returned');
  const duplicate = await api.call('POST', '/api/v1/cluster/carp', { vhid: 7, virtual_ip: '10.0.0.2', prefix: 24, interface: 'eth0', password: 'pw' });
  assert.equal(duplicate.status, 409);
  const stored = api.t.app.context.store.list('cluster_carp')[0];
  assert.ok(!JSON.stringify(stored.data).includes('Secr3t'), 'sealed at rest');
  assert.equal(applied.at(-1), null, 'standalone: no VRRP');
  assert.equal((await api.call('PUT', '/api/v1/cluster/role', { role: 'primary' })).status, 200);
  const spec = applied.at(-1);
  assert.equal(spec?.role, 'primary');
  assert.deepEqual(spec?.addresses, [{ vhid: 7, virtualIp: '10.0.0.1', prefix: 24, interface: 'eth0', password: 'Secr3t' }], 'the renderer gets the opened password');
  const status = (await api.call('GET', '/api/v1/cluster/status')).body;
  assert.equal(status.role, 'primary');
  assert.equal(status.vrrp_state, 'master');
});

test('promote and demote move the priority adjustment (demote gives the addresses away)', async () => {
  assert.equal((await api.call('POST', '/api/v1/cluster/demote')).status, 204);
  let status = (await api.call('GET', '/api/v1/cluster/status')).body;
  assert.equal(status.priority_adjustment, 240);
  assert.equal(applied.at(-1)?.demotion, 240);
  assert.equal(status.role, 'secondary', 'the simulated engine reports the addresses given away');
  assert.equal((await api.call('POST', '/api/v1/cluster/promote')).status, 204);
  status = (await api.call('GET', '/api/v1/cluster/status')).body;
  assert.equal(status.priority_adjustment, 0, 'on the primary, promote clears the demotion');
  assert.equal(status.role, 'primary');
  assert.equal((await api.call('PUT', '/api/v1/cluster/role', { role: 'secondary' })).status, 200);
  assert.equal((await api.call('POST', '/api/v1/cluster/promote')).status, 204);
  assert.equal((await api.call('GET', '/api/v1/cluster/status')).body.priority_adjustment, -100, 'on the secondary, promote raises it above the primary');
  assert.equal((await api.call('PUT', '/api/v1/cluster/role', { role: 'primary' })).status, 200);
});

test('state sync and health checks: 400 naming the field; check types that do not run are refused', async () => {
  assert.equal((await api.call('GET', '/api/v1/cluster/pfsync')).body, null, 'null until set');
  await api.refused('PUT', '/api/v1/cluster/pfsync', { sync_interface: 'sync0', enabled: true }, /body\.sync_peer/);
  // Nothing stored yet: a write without the interface would be kept yet read back as null (a 200 that hides it).
  await api.refused('PUT', '/api/v1/cluster/pfsync', { sync_peer: '10.255.0.2' }, /body\.sync_interface/);
  assert.equal((await api.call('GET', '/api/v1/cluster/pfsync')).body, null, 'the refused write stored nothing');
  await api.refused('PUT', '/api/v1/cluster/pfsync', { sync_interface: 'sync0', sync_peer: 'peer', enabled: true }, /body\.sync_peer/);
  const sync = await api.call('PUT', '/api/v1/cluster/pfsync', { sync_interface: 'sync0', sync_peer: '10.255.0.2', enabled: true });
  assert.equal(sync.status, 200);
  assert.equal(applied.at(-1)?.stateSync?.syncPeer, '10.255.0.2');
  await api.refused('POST', '/api/v1/cluster/health', { name: 'web', check_type: 'http_get', target: 'http://web.example/' }, /body\.target must be an http/);
  await api.refused('POST', '/api/v1/cluster/health', { name: 'web', check_type: 'http_get', target: 'ftp://10.0.0.5/' }, /body\.target/);
  await api.refused('POST', '/api/v1/cluster/health', { name: 'proc', check_type: 'process_running', target: 'a name; rm -rf' }, /body\.target must be a process name/);
  await api.refused('POST', '/api/v1/cluster/health', { name: 'gw', check_type: 'ping', target: 'gw.example' }, /body\.target/);
  await api.refused('POST', '/api/v1/cluster/health', { name: 'db', check_type: 'tcp_port', target: '10.0.0.5' }, /body\.target/);
  await api.created('/api/v1/cluster/health', { name: 'db', check_type: 'tcp_port', target: '10.0.0.5:5432' });
  assert.equal((await api.call('POST', '/api/v1/cluster/health/run')).status, 202);
});

/** Polls the health summary until the named check reads `healthy`. */
async function checkReads(name: string, healthy: boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const checks = (await api.call('GET', '/api/v1/cluster/health-summary')).body.checks as { name: string; healthy: boolean | null; detail: string | null }[];
    const check = checks.find((entry) => entry.name === name);
    if (check?.healthy === healthy) return;
    if (Date.now() > deadline) throw new Error(`${name} did not read healthy=${healthy}: ${JSON.stringify(check)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('http_get and process_running run for real and feed the priority: an HTTP server on loopback and a process of that name', async () => {
  let answer = 200;
  const server = createServer((_request, response) => response.writeHead(answer).end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  // A process of a name nobody else runs: a copy of sleep under that name.
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-hc-'));
  const name = `bwhc${randomBytes(4).toString('hex')}`;
  copyFileSync(findProgram('sleep')!, join(dir, name));
  chmodSync(join(dir, name), 0o755);
  const sleeper = spawn(join(dir, name), ['300'], { stdio: 'ignore' });
  try {
    for (const check of (await api.call('GET', '/api/v1/cluster/health')).body as { id: string }[]) await api.call('DELETE', `/api/v1/cluster/health/${check.id}`);
    await api.created('/api/v1/cluster/health', { name: 'web', check_type: 'http_get', target: `http://127.0.0.1:${port}/healthz`, interval_secs: 1, timeout_secs: 1, failures_before_down: 1 });
    await api.created('/api/v1/cluster/health', { name: 'proc', check_type: 'process_running', target: name, interval_secs: 1, timeout_secs: 1, failures_before_down: 1 });
    await checkReads('web', true);
    await checkReads('proc', true);
    answer = 503;
    await checkReads('web', false);
    assert.deepEqual((await api.call('GET', '/api/v1/cluster/status')).body.failing_checks, ['web']);
    assert.equal(adjusted.at(-1), 1, 'one failing check lowers the VRRP priority');
    sleeper.kill('SIGKILL');
    await checkReads('proc', false);
    assert.equal(adjusted.at(-1), 2);
    answer = 200;
    await checkReads('web', true);
    assert.equal(adjusted.at(-1), 1, 'a check that passes again gives its priority back');
  } finally {
    sleeper.kill('SIGKILL');
    server.close();
    rmSync(dir, { recursive: true, force: true });
    for (const check of (await api.call('GET', '/api/v1/cluster/health')).body as { id: string }[]) await api.call('DELETE', `/api/v1/cluster/health/${check.id}`);
  }
});

test('a virtual address keepalived refuses answers 409 and is not kept: the previous one stays stored and applied', async () => {
  const [entry] = (await api.call('GET', '/api/v1/cluster/carp')).body as Array<Record<string, unknown>>;
  const inForce = applied.at(-1);
  const changed = await api.call('PUT', `/api/v1/cluster/carp/${String(entry.id)}`, { ...entry, id: undefined, interface: REFUSED_INTERFACE });
  assert.equal(changed.status, 409, JSON.stringify(changed.body));
  assert.match(changed.body.error, /keepalived refused refused0; the change was not kept/);
  assert.equal((await api.call('GET', `/api/v1/cluster/carp/${String(entry.id)}`)).body.interface, entry.interface, 'GET shows the old object');
  assert.deepEqual(applied.at(-1), inForce, 'the previous VRRP configuration is applied again');
  const added = await api.call('POST', '/api/v1/cluster/carp', { vhid: 9, virtual_ip: '10.0.9.1', prefix: 24, interface: REFUSED_INTERFACE, password: 'pw' });
  assert.equal(added.status, 409);
  assert.equal((await api.call('GET', '/api/v1/cluster/carp')).body.length, 1, 'the refused address is not stored');
});
