import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApp } from './helpers/app.js';
import { adminApi } from './helpers/admin-api.js';
import { startAreaApp } from './helpers/area-app.js';
import { headersWithPermissions } from './helpers/auth.js';
import { flow, replayPlatform, ReplayTraffic } from './helpers/traffic.js';
import { dashboardAreas, dashboardOf } from './helpers/areas.js';

const area = dashboardAreas({ manualTicks: true });
const traffic = new ReplayTraffic();
const api = adminApi({ areas: area, platform: replayPlatform(traffic) });
const service = () => dashboardOf(api.t.app);


test('GET /connections: heaviest first, filters by address, port and protocol, pages with X-Total-Count', async () => {
  traffic.set([
    flow(1, 100, { src_addr: '10.0.0.1', dst_port: 22 }),
    flow(2, 900, { src_addr: '10.0.0.2', protocol: 'udp', dst_port: 53 }),
    flow(3, 500, { dst_addr: '10.0.0.1', dst_port: 443 }),
    flow(4, 700, { src_addr: '10.0.0.9', dst_port: 443 }),
  ], 4);
  api.t.clock.advance(2000);
  const all = await api.t.app.inject({ url: '/api/v1/connections', headers: api.headers });
  assert.equal(all.statusCode, 200);
  assert.deepEqual(all.json().map((f: { id: number }) => f.id), [2, 4, 3, 1]);
  assert.equal(all.headers['x-total-count'], '4');
  assert.equal(all.headers['x-bulwark-simulated'], 'true');
  const byAddress = await api.t.app.inject({ url: '/api/v1/connections?address=10.0.0.1', headers: api.headers });
  assert.deepEqual(byAddress.json().map((f: { id: number }) => f.id), [3, 1]);
  const byPort = await api.t.app.inject({ url: '/api/v1/connections?port=443&limit=1&offset=1', headers: api.headers });
  assert.deepEqual(byPort.json().map((f: { id: number }) => f.id), [3]);
  assert.equal(byPort.headers['x-total-count'], '2');
  const byProtocol = await api.t.app.inject({ url: '/api/v1/connections?protocol=udp', headers: api.headers });
  assert.deepEqual(byProtocol.json().map((f: { id: number }) => f.id), [2]);
  const bad = await api.t.app.inject({ url: '/api/v1/connections?limit=0', headers: api.headers });
  assert.equal(bad.statusCode, 400);
  assert.match(bad.json().error, /limit/);
  const unknown = await api.t.app.inject({ url: '/api/v1/connections?colour=red', headers: api.headers });
  assert.equal(unknown.statusCode, 400);
});

test('GET /blocked and GET /logs: newest first, limit honoured, sources combined', async () => {
  traffic.blockedPackets = [
    { timestamp: '2030-01-01T00:00:02.000000Z', action: 'block', direction: 'in', interface: 'wan0', protocol: 'tcp', src_addr: '192.0.2.9', src_port: 5555, dst_addr: '10.0.0.1', dst_port: 22, reason: 'policy', rule_id: 'r1' },
    { timestamp: '2030-01-01T00:00:01.000000Z', action: 'block', direction: 'in', interface: 'wan0', protocol: 'udp', src_addr: '192.0.2.8', src_port: 53, dst_addr: '10.0.0.1', dst_port: 161, reason: 'policy', rule_id: null },
  ];
  const blocked = await api.t.app.inject({ url: '/api/v1/blocked?limit=1', headers: api.headers });
  assert.equal(blocked.statusCode, 200);
  assert.deepEqual(blocked.json().map((b: { src_addr: string }) => b.src_addr), ['192.0.2.9']);
  api.t.app.context.db.prepare("INSERT INTO system_log (at, source, level, message) VALUES (?, 'packet_filter', 'info', 'ruleset applied')").run('2029-12-31T23:59:59.000Z');
  const logs = await api.t.app.inject({ url: '/api/v1/logs?limit=50', headers: api.headers });
  assert.equal(logs.statusCode, 200);
  const entries = logs.json() as { source: string; timestamp: string; details: string }[];
  assert.deepEqual(new Set(entries.map((e) => e.source)), new Set(['packet_filter', 'audit', 'system']));
  const times = entries.map((e) => Date.parse(e.timestamp));
  assert.deepEqual(times, [...times].sort((a, b) => b - a), 'newest first');
  assert.match(entries.find((e) => e.source === 'packet_filter')!.details, /192\.0\.2\.9:5555 -> 10\.0\.0\.1:22/);
  const limited = await api.t.app.inject({ url: '/api/v1/logs?limit=2', headers: api.headers });
  assert.equal(limited.json().length, 2);
  const onlySystem = await api.t.app.inject({ url: '/api/v1/logs?source=system', headers: api.headers });
  assert.deepEqual(onlySystem.json().map((e: { details: string }) => e.details), ['ruleset applied']);
});

test('GET /metrics, /metrics/list and /metrics/series at the four resolutions', async () => {
  traffic.set(Array.from({ length: 30 }, (_, i) => flow(i, 1000 * i)), 30);
  const broadcaster = service().broadcaster;
  for (let i = 0; i < 130; i++) {
    api.t.clock.advance(1000);
    await broadcaster.poll();
  }
  const metrics = await api.t.app.inject({ url: '/api/v1/metrics', headers: api.headers });
  assert.equal(metrics.statusCode, 200);
  const body = metrics.json();
  assert.equal(body.pf_states_count, 30);
  for (const field of ['event_loop_delay_ms', 'heap_used', 'active_handles', 'worker_threads', 'dashboard_sockets', 'metrics_outbox_depth']) {
    assert.ok(field in body.runtime, `runtime.${field}`);
  }
  const list = (await api.t.app.inject({ url: '/api/v1/metrics/list', headers: api.headers })).json().names as string[];
  for (const name of ['pf.states', 'conn.total', 'conn.tcp', 'traffic.bps_in', 'runtime.heap_used']) assert.ok(list.includes(name), name);
  assert.deepEqual(list, [...list].sort());

  const seconds = (await api.t.app.inject({ url: '/api/v1/metrics/series?name=conn.total,traffic.bps_in&range_secs=60', headers: api.headers })).json();
  assert.equal(seconds.tier, 'second');
  assert.equal(seconds.series.length, 2);
  assert.ok(seconds.points.length >= 59 && seconds.points.length <= 61, `${seconds.points.length} points in a minute`);
  assert.ok(seconds.points.every((p: { v: number }) => p.v === 30));
  assert.ok(seconds.series[1].points.every((p: { v: number }) => p.v === 8000), '1000 bytes/s on wan0 → 8000 bit/s');

  const minutes = (await api.t.app.inject({ url: '/api/v1/metrics/series?name=conn.total&range_secs=600&resolution=1m', headers: api.headers })).json();
  assert.equal(minutes.tier, 'minute');
  assert.equal(minutes.interval_secs, 60);
  assert.ok(minutes.points.length >= 2 && minutes.points.length <= 4);
  assert.ok(minutes.points.every((p: { t: number }) => p.t % 60 === 0));
  const auto = (await api.t.app.inject({ url: '/api/v1/metrics/series?name=conn.total&range_secs=86400', headers: api.headers })).json();
  assert.equal(auto.tier, 'minute', 'a day fits the 48 h of minute points');
  const days = (await api.t.app.inject({ url: '/api/v1/metrics/series?name=conn.total&resolution=day&range_secs=864000', headers: api.headers })).json();
  assert.equal(days.points.length, 1, 'the open day bucket');

  const unknown = await api.t.app.inject({ url: '/api/v1/metrics/series?name=no.such', headers: api.headers });
  assert.equal(unknown.statusCode, 404);
  const missing = await api.t.app.inject({ url: '/api/v1/metrics/series', headers: api.headers });
  assert.equal(missing.statusCode, 400);
  assert.match(missing.json().error, /name/);
});

test('/settings/dashboard-history: duration and ram modes, clamping, the required number, retention applied', async () => {
  const url = '/api/v1/settings/dashboard-history';
  const initial = (await api.t.app.inject({ url, headers: api.headers })).json();
  assert.equal(initial.history_seconds, 1800);
  assert.equal(initial.mode, 'duration');
  assert.ok(initial.current_entries > 100);
  const short = await api.t.app.inject({ method: 'PUT', url, headers: api.headers, payload: { history_seconds: 10 } });
  assert.equal(short.statusCode, 200);
  assert.equal(short.json().history_seconds, 300, 'clamped to 5 minutes');
  assert.equal(service().engine.getRetention().second, 300);
  const ram = await api.t.app.inject({ method: 'PUT', url, headers: api.headers, payload: { mode: 'ram', ram_limit_mb: 1000 } });
  assert.equal(ram.json().ram_limit_mb, 256);
  assert.equal(ram.json().history_seconds, 86_400);
  assert.equal(ram.json().mode, 'ram');
  const missing = await api.t.app.inject({ method: 'PUT', url, headers: api.headers, payload: { mode: 'ram' } });
  assert.equal(missing.statusCode, 400);
  assert.match(missing.json().error, /ram_limit_mb/);
  const wrongType = await api.t.app.inject({ method: 'PUT', url, headers: api.headers, payload: { minute_retention_hours: 'many' } });
  assert.equal(wrongType.statusCode, 400);
  await api.t.app.inject({ method: 'PUT', url, headers: api.headers, payload: { mode: 'duration', history_seconds: 1800, minute_retention_hours: 24 } });
  assert.deepEqual(service().engine.getRetention(), { second: 1800, minute: 1440, hour: 720, day: 730 });
});

test('/settings/metrics-store: the password in the URL is sealed and never returned; status says disabled', async () => {
  const url = '/api/v1/settings/metrics-store';
  const initial = (await api.t.app.inject({ url, headers: api.headers })).json();
  assert.deepEqual(initial, { enabled: false, url: 'redis://127.0.0.1:6379', retention_minutes: 30, has_password: false, status: 'disabled' });
  const put = await api.t.app.inject({ method: 'PUT', url, headers: api.headers, payload: { url: 'redis://:s3cret-pass@127.0.0.1:6390', retention_minutes: 5 } });
  assert.equal(put.statusCode, 200, put.body);
  assert.equal(put.json().url, 'redis://127.0.0.1:6390');
  assert.equal(put.json().has_password, true);
  assert.ok(!put.body.includes('s3cret'));
  const stored = JSON.stringify(api.t.app.context.db.prepare("SELECT data FROM config_objects WHERE kind = 'settings.metrics_store'").get());
  assert.ok(!stored.includes('s3cret-pass'), 'sealed at rest');
  assert.equal(service().storeSettings.password(), 's3cret-pass');
  // a round trip of what GET shows keeps the password
  await api.t.app.inject({ method: 'PUT', url, headers: api.headers, payload: { url: 'redis://127.0.0.1:6390' } });
  assert.equal(service().storeSettings.password(), 's3cret-pass');
  const cleared = await api.t.app.inject({ method: 'PUT', url, headers: api.headers, payload: { password: '' } });
  assert.equal(cleared.json().has_password, false);
  for (const bad of ['http://127.0.0.1:6379', 'not a url', 'redis://127.0.0.1:6379/?x=1']) {
    const response = await api.t.app.inject({ method: 'PUT', url, headers: api.headers, payload: { url: bad } });
    assert.equal(response.statusCode, 400, bad);
    assert.match(response.json().error, /url/);
  }
  const reader = await headersWithPermissions(api.t.app, ['settings:read'], api.headers);
  const denied = await api.t.app.inject({ method: 'PUT', url, headers: reader, payload: { enabled: true } });
  assert.equal(denied.statusCode, 403);
});

test('SSE /dns/stream: text/event-stream, id on every event, stats then published events, ticket auth, cleanup on disconnect', async () => {
  const base = await api.t.app.listen({ host: '127.0.0.1', port: 0 });
  const noAccept = await api.t.app.inject({ url: '/api/v1/dns/stream', headers: api.headers });
  assert.equal(noAccept.statusCode, 406);
  const ticket = (await api.t.app.inject({ method: 'POST', url: '/api/v1/auth/ws-ticket', headers: api.headers })).json().ticket;
  const controller = new AbortController();
  const response = await fetch(`${base}/api/v1/dns/stream?ticket=${ticket}`, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
  assert.equal(response.headers.get('cache-control'), 'no-cache, no-transform');
  const reader = response.body!.getReader();
  let text = '';
  const readUntil = async (pattern: RegExp) => {
    while (!pattern.test(text)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended; got ${text}`);
      text += Buffer.from(value).toString();
    }
  };
  await readUntil(/"type":"stats"[\s\S]*\n\n/);
  dashboardOf(api.t.app).feeds.dns.publish({ type: 'block', data: { ts: 1, qname: 'ads.example.', action: 'nxdomain', zone: 'rpz.blocklist-1.' } });
  await service().pushDnsStats();
  await readUntil(/"type":"block"[\s\S]*\n\n[\s\S]*"type":"stats"[\s\S]*\n\n/);
  assert.match(text, /^retry: \d+\n\n/);
  const events = text.split('\n\n').filter((block) => block.includes('data:'));
  assert.ok(events.length >= 3);
  events.forEach((block, index) => {
    const lines = block.split('\n');
    assert.equal(lines[0], `id: ${index + 1}`, 'ids count up from 1');
    assert.ok(lines.at(-1)!.startsWith('data: {'));
    JSON.parse(lines.at(-1)!.slice(6));
  });
  const stats = JSON.parse(events[0].split('\n').at(-1)!.slice(6));
  assert.equal(stats.type, 'stats');
  assert.ok('dns_traffic' in stats.data);
  assert.equal(service().dnsStreams.size, 1);
  controller.abort();
  const start = Date.now();
  while (service().dnsStreams.size !== 0 && Date.now() - start < 2000) await new Promise((r) => setTimeout(r, 10));
  assert.equal(service().dnsStreams.size, 0, 'closed stream removed');
  assert.equal(dashboardOf(api.t.app).feeds.dns.subscribers, 0, 'its subscription removed');
  const replay = await fetch(`${base}/api/v1/dns/stream?ticket=${ticket}`, { headers: { accept: 'text/event-stream' } });
  assert.equal(replay.status, 401, 'the ticket was single use');
});

test('metric history survives a restart (SQLite persistence)', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bulwark-dash-'));
  try {
    const first = dashboardAreas({ manualTicks: true });
    const replay = new ReplayTraffic();
    replay.set([flow(1, 10)], 77);
    const app1 = await startTestApp({ dataDir, areas: first, platform: replayPlatform(replay) });
    const clock = app1.clock;
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      await dashboardOf(app1.app).broadcaster.poll();
    }
    await app1.close();
    const second = dashboardAreas({ manualTicks: true });
    const app2 = await startAreaApp({ dataDir, clock, areas: second, platform: replayPlatform(new ReplayTraffic()) });
    try {
      const series = (await app2.request('GET', '/api/v1/metrics/series?name=pf.states&range_secs=60')).json();
      assert.equal(series.points.length, 5);
      assert.ok(series.points.every((p: { v: number }) => p.v === 77));
    } finally {
      await app2.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
