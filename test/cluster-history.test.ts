/**
 * Issue 39: the failover history records every role change (the VRRP transitions the engine reports, promote,
 * demote, a role setting) and survives a restart; the health summary reports from the live checks; the dashboard
 * WebSocket carries `role_changed` and `health_changed` cluster frames (wire-format §5.1, §10). Simulated platform:
 * its engine reports master/backup from the priority, as keepalived's notify hook would.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';
import type { Headers } from './helpers/auth.js';
import { createSimulatedPlatform } from '../src/platform/simulated/index.js';

const dataDir = mkdtempSync(join(tmpdir(), 'bulwark-ha-history-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

function session(app: AreaApp) {
  const { headers } = app;
  return async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) => {
    const response = await app.app.inject({ method, url, payload: payload as never, headers });
    return { status: response.statusCode, body: response.body ? response.json() : undefined };
  };
}

async function until<T>(what: string, probe: () => T | undefined | false, deadlineMs = 10_000): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('role changes are recorded with time, from/to and cause, announced on the dashboard WebSocket, and kept across a restart', { timeout: 120_000 }, async () => {
  let app = await startAreaApp({ dataDir, platform: createSimulatedPlatform() });
  try {
    const call = session(app);
    const base = (await app.app.listen({ host: '127.0.0.1', port: 0 })).replace('http', 'ws');
    const socket = async (headers?: Headers) => {
      const issued = await app.app.inject({ method: 'POST', url: '/api/v1/auth/ws-ticket', headers: headers ?? app.headers });
      const ws = new WebSocket(`${base}/api/v1/ws?ticket=${issued.json().ticket as string}`);
      const received: any[] = [];
      ws.on('message', (data) => received.push(JSON.parse(data.toString())));
      await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
      return { ws, received };
    };
    const { ws, received: frames } = await socket();
    // A dashboard viewer without ha:manage gets the status frames, never the cluster ones.
    const VIEWER = { username: 'vic', password: 'Vic-viewer-pass1' };
    assert.equal((await call('POST', '/api/v1/auth/users', { ...VIEWER, role: 'viewer' })).status, 201);
    const login = await app.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: VIEWER });
    const viewer = await socket({ authorization: `Bearer ${login.json().access_token as string}` });
    const cluster = () => frames.filter((frame) => frame.channel === 'cluster').map((frame) => frame.event);

    assert.deepEqual((await call('GET', '/api/v1/cluster/failover-history')).body, [], 'nothing happened yet');
    assert.equal((await call('POST', '/api/v1/cluster/carp', { vhid: 12, virtual_ip: '10.12.0.1', prefix: 24, interface: 'eth0', password: 'pw12' })).status, 201);
    assert.equal((await call('PUT', '/api/v1/cluster/role', { role: 'primary' })).status, 200);
    assert.equal((await call('POST', '/api/v1/cluster/demote')).status, 204);
    assert.equal((await call('POST', '/api/v1/cluster/promote')).status, 204);

    const history = (await call('GET', '/api/v1/cluster/failover-history')).body as any[];
    assert.deepEqual(history.map((entry) => [entry.cause, entry.from_role, entry.to_role]), [
      ['role_set', 'standalone', 'primary'], ['vrrp', 'standalone', 'primary'],
      ['demote', 'primary', 'secondary'], ['vrrp', 'primary', 'secondary'],
      ['promote', 'secondary', 'primary'], ['vrrp', 'secondary', 'primary'],
    ]);
    assert.ok(history.every((entry) => typeof entry.id === 'string' && !Number.isNaN(Date.parse(entry.ts))));
    assert.match(history[2].detail, /priority adjustment 0 → 240/);

    await until('the role_changed frames', () => cluster().filter((event) => event.type === 'role_changed').length >= 3);
    assert.deepEqual(cluster().filter((event) => event.type === 'role_changed'), [
      { type: 'role_changed', from: 'standalone', to: 'primary', vhid: 12 },
      { type: 'role_changed', from: 'primary', to: 'secondary', vhid: 12 },
      { type: 'role_changed', from: 'secondary', to: 'primary', vhid: 12 },
    ]);
    assert.ok(frames.every((frame) => frame.channel !== 'cluster' || !('type' in frame)), 'a cluster frame has no top-level type');
    assert.ok(viewer.received.length > 0, 'the viewer socket is open and fed');
    assert.deepEqual(viewer.received.filter((frame) => frame.channel === 'cluster'), [], 'no cluster frame without ha:manage');
    viewer.ws.close();

    // A tcp_port check against a closed port fails: the summary and a health_changed frame say so.
    assert.equal((await call('POST', '/api/v1/cluster/health', { name: 'closed', check_type: 'tcp_port', target: '127.0.0.1:9', interval_secs: 1, timeout_secs: 1, failures_before_down: 1 })).status, 201);
    await until('the health_changed frame', () => cluster().find((event) => event.type === 'health_changed'));
    assert.deepEqual(cluster().find((event) => event.type === 'health_changed'), { type: 'health_changed', check: 'closed', healthy: false, detail: 'tcp_port 127.0.0.1:9 failed 1 time(s) in a row' });
    const summary = (await call('GET', '/api/v1/cluster/health-summary')).body;
    assert.equal(summary.loopback_key_missing, false, 'the first start created the daemon loopback key');
    assert.deepEqual(summary.missing_peer_keys, []);
    assert.ok(summary.warnings.some((warning: string) => /health check closed is failing/.test(warning)), JSON.stringify(summary));
    assert.equal(summary.checks[0].healthy, false);
    const keys = (await call('GET', '/api/v1/auth/api-keys')).body as { id: string; name: string }[];
    const loopback = keys.find((key) => key.name === 'daemon-loopback');
    assert.ok(loopback, JSON.stringify(keys));
    const revoked = await app.app.inject({ method: 'DELETE', url: `/api/v1/auth/api-keys/${loopback.id}`, headers: app.headers });
    assert.equal(revoked.statusCode, 204, revoked.body);
    const after = (await call('GET', '/api/v1/cluster/health-summary')).body;
    assert.equal(after.loopback_key_missing, true, 'a revoked loopback key is reported');
    assert.ok(after.warnings.some((warning: string) => /daemon loopback key/.test(warning)));
    ws.close();
  } finally {
    await app.close();
  }

  app = await startAreaApp({ dataDir, platform: createSimulatedPlatform() });
  try {
    const call = session(app);
    const kept = (await call('GET', '/api/v1/cluster/failover-history')).body as any[];
    assert.ok(kept.length >= 6, `the history survives the restart: ${JSON.stringify(kept)}`);
    assert.deepEqual(kept.slice(0, 3).map((entry) => entry.cause), ['role_set', 'vrrp', 'demote']);
  } finally {
    await app.close();
  }
});
