/**
 * What stays on the box, through the HTTP interface with the injected clock: the API log, the audit log and a
 * daemon's log are written under the data directory's logs/ (and not while syslog's disable_local is set);
 * Bulwark's own scheduler rotates them with the /settings/log-rotation policy (no cron, no logrotate); the
 * rotate action works on them; IDS alerts are pruned per /settings/ids-alerts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { adminApi } from './helpers/admin-api.js';
import { areaOf } from './helpers/areas.js';
import type { createSettingsArea } from '../src/areas/settings/routes.js';
import type { createIdsArea } from '../src/areas/ids/routes.js';
import { ALERT_PRUNE_MS, ROTATION_CHECK_MS } from '../src/areas/settings/log-maintenance.js';
import { reportDaemonEvent } from '../src/platform/daemon-events.js';

// The default logger (not the silent one tests usually get), kept off standard output where TAP goes.
const api = adminApi({ logger: undefined, logToStdout: false });
const { call } = api;
const maintenance = () => areaOf<ReturnType<typeof createSettingsArea>>(api.t.app, 'settings').maintenance;
const ids = () => areaOf<ReturnType<typeof createIdsArea>>(api.t.app, 'ids').service;
const logFile = (name: string) => join(api.t.dataDir, 'logs', name);
const read = (name: string) => (existsSync(logFile(name)) ? readFileSync(logFile(name), 'utf8') : '');
const lines = (name: string) => read(name).split('\n').filter(Boolean);

test('the API log, the audit log and a daemon log are written under logs/, and not while disable_local is set', async () => {
  assert.equal((await call('GET', '/api/v1/rules')).status, 200);
  const apiLine = lines('api.log').map((l) => JSON.parse(l)).find((entry) => entry.msg === 'request' && entry.path === '/api/v1/rules');
  assert.ok(apiLine, read('api.log'));
  assert.equal(apiLine.status, 200);

  // A failed login reaches the audit log at the next tick (no real waiting: the tick is called).
  const failed = await api.t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'admin', password: 'wrong-password-1' } });
  assert.equal(failed.statusCode, 401);
  await maintenance().tick();
  const audit = lines('audit.log').map((l) => JSON.parse(l));
  assert.ok(audit.some((entry) => entry.category === 'auth' && entry.outcome === 'failure'), read('audit.log'));
  // A reload, with its actor.
  assert.equal((await call('POST', '/api/v1/reload')).status, 200);
  await maintenance().tick();
  assert.ok(lines('audit.log').map((l) => JSON.parse(l)).some((entry) => entry.category === 'packet_filter' && entry.action === 'reload' && entry.actor === 'admin'), read('audit.log'));

  // The resolver's own lines go to logs/unbound.log (the simulated daemon logs its start).
  assert.equal((await call('POST', '/api/v1/dns/resolver/start')).status, 200);
  assert.match(read('unbound.log'), /unbound\[simulated\]/);

  // disable_local: nothing more is written locally.
  assert.equal((await call('PUT', '/api/v1/settings/syslog', { disable_local: true })).status, 200);
  const sizes = ['api.log', 'audit.log', 'unbound.log'].map((name) => statSync(logFile(name)).size);
  await call('GET', '/api/v1/rules');
  await api.t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'admin', password: 'wrong-password-2' } });
  await call('POST', '/api/v1/dns/resolver/restart');
  await maintenance().tick();
  assert.deepEqual(['api.log', 'audit.log', 'unbound.log'].map((name) => statSync(logFile(name)).size), sizes);
  assert.equal((await call('PUT', '/api/v1/settings/syslog', { disable_local: false })).status, 200);
  await call('GET', '/api/v1/rules');
  assert.ok(statSync(logFile('api.log')).size > sizes[0], 'written again once disable_local is cleared');
});

test('every supervised program\'s lines reported on the daemon event bus go to its own file under logs/, rotated like the others', async () => {
  // What SupervisedProcess reports for a child and for an adopted process alike (ulogd-reader for ulogd2's log file).
  const reported: [label: string, line: string, file: string, written: string][] = [
    ['ulogd', 'ulogd.c:978 building new pluginstance stack', 'ulogd.log', 'ulogd.c:978 building new pluginstance stack'],
    ['softflowd eth1', 'softflowd v1.1.0 starting data collection', 'softflowd.log', 'eth1: softflowd v1.1.0 starting data collection'],
    ['wireguard-go b13wg0', 'ERROR: (b13wg0) peer(X9Yo…neXE) - Failed to send handshake initiation', 'wireguard-go.log', 'b13wg0: ERROR: (b13wg0) peer(X9Yo…neXE) - Failed to send handshake initiation'],
    ['charon-systemd', '10[IKE] IKE_SA fw[1] established', 'charon.log', '10[IKE] IKE_SA fw[1] established'],
    ['caddy', '{"level":"info","msg":"serving initial configuration"}', 'caddy.log', '{"level":"info","msg":"serving initial configuration"}'],
    ['suricata', 'Notice: threads: Engine started.', 'suricata.log', 'Notice: threads: Engine started.'],
  ];
  for (const [label, line] of reported) reportDaemonEvent({ kind: 'log', daemon: label, line });
  for (const [label, , file, written] of reported) assert.deepEqual(lines(file), [written], label);
  // A label no program of the list carries makes no file (the label never becomes a path).
  reportDaemonEvent({ kind: 'log', daemon: '../../etc/passwd', line: 'x' });
  assert.ok(!existsSync(join(api.t.dataDir, 'etc')) && !existsSync(logFile('passwd.log')));

  // disable_local stops them too.
  assert.equal((await call('PUT', '/api/v1/settings/syslog', { disable_local: true })).status, 200);
  for (const [label, line] of reported) reportDaemonEvent({ kind: 'log', daemon: label, line });
  for (const [label, , file] of reported) assert.equal(lines(file).length, 1, label);
  assert.equal((await call('PUT', '/api/v1/settings/syslog', { disable_local: false })).status, 200);

  // Rotation knows them: rotate by service, then the next line goes into the live file.
  const rotated = await call('POST', '/api/v1/settings/log-rotation/rotate', { path: 'wireguard-go' });
  assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
  assert.equal(read('wireguard-go.log'), '');
  reportDaemonEvent({ kind: 'log', daemon: 'wireguard-go b13wg0', line: 'again' });
  assert.deepEqual(lines('wireguard-go.log'), ['b13wg0: again']);
  const view = (await call('GET', '/api/v1/settings/log-rotation')).body;
  assert.ok(['ulogd', 'softflowd', 'wireguard-go', 'charon', 'caddy', 'suricata'].every((service) => view.logs.some((l: { service: string }) => l.service === service)), JSON.stringify(view.logs));
});

test('the scheduler rotates the written logs with the policy on the service clock; rotate works on them', async () => {
  assert.equal((await call('PUT', '/api/v1/settings/log-rotation', { max_size_mb: 1, keep: 2, compression: 'gzip' })).status, 200);
  const api1 = logFile('api.log');
  // More than the cap, as a busy API would write it (the API's own lines keep arriving meanwhile).
  appendFileSync(api1, `${'x'.repeat(1023)}\n`.repeat(1100));
  await maintenance().tick();
  assert.ok(statSync(api1).size > 1024 * 1024, 'not before the check is due');
  api.t.clock.advance(ROTATION_CHECK_MS);
  await maintenance().tick();
  assert.ok(statSync(api1).size < 1024 * 1024, 'rotated once due');
  assert.ok(existsSync(`${api1}.1.gz`));
  assert.ok(gunzipSync(readFileSync(`${api1}.1.gz`)).length > 1024 * 1024);
  // The API keeps writing into the live file after the rotation (the same descriptor, truncated).
  await call('GET', '/api/v1/rules');
  assert.match(read('api.log'), /"path":"\/api\/v1\/rules"/);

  // Two more rotations: keep 2 leaves .1.gz and .2.gz, no .3.gz.
  for (let round = 0; round < 2; round++) {
    appendFileSync(api1, `${'y'.repeat(1023)}\n`.repeat(1100));
    api.t.clock.advance(ROTATION_CHECK_MS);
    await maintenance().tick();
  }
  assert.ok(existsSync(`${api1}.2.gz`) && !existsSync(`${api1}.3.gz`));

  // POST …/rotate on the audit log Bulwark writes.
  await api.t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'admin', password: 'wrong-password-3' } });
  await maintenance().tick();
  const before = read('audit.log');
  assert.ok(before.length > 0);
  const rotated = await call('POST', '/api/v1/settings/log-rotation/rotate', { path: 'audit' });
  assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
  assert.equal(read('audit.log'), '');
  assert.equal(gunzipSync(readFileSync(`${logFile('audit.log')}.1.gz`)).toString(), before);
  const view = (await call('GET', '/api/v1/settings/log-rotation')).body;
  assert.ok(view.logs.find((l: any) => l.service === 'bulwark-api').rotated === 2);
});

test('IDS alerts are pruned by age and by size per /settings/ids-alerts', async () => {
  const now = api.t.clock.now();
  const eve = (ageSecs: number, index: number, signature = 'test signature') => JSON.stringify({
    timestamp: new Date(now - ageSecs * 1000).toISOString(), event_type: 'alert', src_ip: '198.51.100.7', dest_ip: '192.0.2.10', proto: 'TCP',
    src_port: 40000 + (index % 20000), dest_port: 443, alert: { signature_id: 9000001, signature, severity: 2, action: 'allowed' },
  });
  // Two hours old, and fresh.
  ids().ingestEve([eve(7200, 1), eve(7200, 2), eve(10, 3)].join('\n'));
  assert.equal((await call('GET', '/api/v1/ids/alerts')).body.length, 3);
  assert.equal((await call('PUT', '/api/v1/settings/ids-alerts', { max_age_secs: 3600 })).status, 200);
  await maintenance().tick();
  assert.equal((await call('GET', '/api/v1/ids/alerts')).body.length, 3, 'not before the prune is due');
  api.t.clock.advance(ALERT_PRUNE_MS);
  await maintenance().tick();
  const left = (await call('GET', '/api/v1/ids/alerts')).body;
  assert.equal(left.length, 1, JSON.stringify(left));

  // Size: max_mb 8 (the smallest) and about 10 MB of fresh alerts; the oldest go, the newest stay.
  assert.equal((await call('PUT', '/api/v1/settings/ids-alerts', { max_mb: 8, max_age_secs: 604800 })).status, 200);
  const big = 'z'.repeat(2000);
  const batch = (from: number) => Array.from({ length: 1000 }, (_, i) => eve(600 - (from + i) / 100, from + i, `${big} ${from + i}`)).join('\n');
  for (let from = 0; from < 5000; from += 1000) ids().ingestEve(batch(from));
  const stored = () => (api.t.app.context.db.prepare('SELECT count(*) AS n FROM ids_alerts').get() as { n: number }).n;
  assert.equal(stored(), 5001);
  api.t.clock.advance(ALERT_PRUNE_MS);
  await maintenance().tick();
  const kept = stored();
  assert.ok(kept < 5001 && kept > 3000, `kept ${kept}`);
  const has = (index: number) => Boolean(api.t.app.context.db.prepare('SELECT 1 FROM ids_alerts WHERE signature_msg = ?').get(`${big} ${index}`));
  assert.ok(has(4999) && !has(0), 'the newest alerts are kept, the oldest dropped');
  assert.ok(api.t.app.context.db.prepare("SELECT 1 FROM ids_alerts WHERE signature_msg = 'test signature'").get(), 'the fresh small alert (newer than the batch) is kept');
});
