/**
 * GET /api/v1/metrics/prometheus through the HTTP interface: the text exposition passes `promtool check metrics`
 * (Debian `prometheus`), a rule's hit counter there equals its `hits` on GET /rules, a hostile rule description
 * cannot break out of its label, an API key holding dashboard:view may scrape and one without it may not, and
 * API requests are counted per route template.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { adminApi } from './helpers/admin-api.js';
import { createSimulatedPlatform } from '../src/platform/simulated/index.js';
import type { PacketFilter, RuleCounter } from '../src/platform/packet-filter.js';
import { areaOf } from './helpers/areas.js';
import { systemSkip } from './helpers/system-skip.js';
import { findProgram } from '../src/platform/daemon-tools.js';
import type { createPacketFilterArea } from '../src/areas/packet-filter/routes.js';

const platform = createSimulatedPlatform();
let kernel: RuleCounter[] = [];
const packetFilter: PacketFilter = Object.assign(Object.create(platform.packetFilter) as PacketFilter, { counters: async () => kernel });
// The kernel's named counters (the simulated platform has none) also feed the exposition's packet-filter section.
const traffic = Object.assign(Object.create(platform.traffic) as typeof platform.traffic, { ruleCounters: async () => kernel });
const api = adminApi({ platform: { ...platform, packetFilter, traffic } });
const { call, created } = api;
const hits = () => areaOf<ReturnType<typeof createPacketFilterArea>>(api.t.app, 'packet-filter').hits;

// Rule descriptions refuse control characters; the writer's own property test (below) covers line feeds.
const HOSTILE = 'web"} bulwark_fake 1 # TYPE x counter\\';

async function scrape(headers: Record<string, string> = api.headers) {
  const response = await api.t.app.inject({ method: 'GET', url: '/api/v1/metrics/prometheus', headers });
  return { status: response.statusCode, type: String(response.headers['content-type']), text: response.body };
}

/** The value of one sample, by name and exact label text. */
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

test('rule hits in the exposition equal GET /rules; a hostile description stays inside its label', async () => {
  const rule = await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: 443, description: HOSTILE });
  kernel = [{ name: `rule_${rule.id}`, packets: 37, bytes: 41_000 }];
  await hits().sample();
  api.t.clock.advance(60_000);
  kernel = [{ name: `rule_${rule.id}`, packets: 50, bytes: 52_000 }];
  await hits().sample();

  const listed = (await call('GET', '/api/v1/rules')).body.find((r: any) => r.id === rule.id);
  assert.deepEqual(listed.hits, { packets: 50, bytes: 52_000 });
  const { status, type, text } = await scrape();
  assert.equal(status, 200, text);
  assert.match(type, /^text\/plain; version=0\.0\.4/);
  assert.equal(sample(text, 'bulwark_rule_hits_packets_total', `rule_id="${rule.id}"`), listed.hits.packets);
  assert.equal(sample(text, 'bulwark_rule_hits_bytes_total', `rule_id="${rule.id}"`), listed.hits.bytes);
  assert.equal(sample(text, 'bulwark_rule_last_hit_timestamp_seconds', `rule_id="${rule.id}"`), Date.parse(listed.last_hit_at) / 1000);
  // The description is one escaped label value: no injected sample line, no injected TYPE line.
  const infoLine = text.split('\n').find((l) => l.startsWith(`bulwark_rule_info{rule_id="${rule.id}"`));
  assert.equal(infoLine, `bulwark_rule_info{rule_id="${rule.id}",action="pass",status="active",description="web\\"} bulwark_fake 1 # TYPE x counter\\\\"} 1`);
  // Every section of the simulated platform could be read.
  for (const section of ['packet_filter', 'rules', 'interfaces', 'gateways', 'dns', 'dhcp', 'vpn', 'ids', 'api', 'process']) {
    assert.equal(sample(text, 'bulwark_scrape_section_ok', `section="${section}"`), 1, section);
  }
});

test('gateway state and latency come from the gateway monitor', async () => {
  const instance = await created('/api/v1/multiwan/instances', { name: 'isp-a', fib_number: 3 });
  const gateway = await created('/api/v1/multiwan/gateways', { name: 'wan-a', instance_id: instance.id, interface: 'eth0', next_hop: '192.0.2.1' });
  const probed = await call('POST', `/api/v1/multiwan/gateways/${gateway.id}/probe-now`, { success: true, rtt_ms: 12 });
  assert.equal(probed.status, 200, JSON.stringify(probed.body));
  const { text } = await scrape();
  const health = (await call('GET', `/api/v1/multiwan/gateways/${gateway.id}`)).body;
  assert.equal(sample(text, 'bulwark_gateway_rtt_seconds', 'gateway="wan-a"'), health.last_rtt_ms / 1000);
  assert.equal(sample(text, 'bulwark_gateway_state', `gateway="wan-a",state="${health.state}"`), 1);
  assert.equal(sample(text, 'bulwark_gateway_up', 'gateway="wan-a"'), health.state === 'up' ? 1 : 0);
});

test('an API key with dashboard:view scrapes; one without it is refused; requests are counted per route template', async () => {
  const key = async (permissions: string[]) => {
    const made = await call('POST', '/api/v1/auth/api-keys', { name: `scrape-${permissions.join('-') || 'none'}`, permissions });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    return { authorization: `ApiKey ${made.body.key}` };
  };
  const monitoring = await key(['dashboard:view']);
  const other = await key(['rules:read']);
  assert.equal((await scrape(other)).status, 403);
  for (let i = 0; i < 3; i++) assert.equal((await api.t.app.inject({ method: 'GET', url: '/api/v1/rules', headers: other })).statusCode, 200);
  const { status, text } = await scrape(monitoring);
  assert.equal(status, 200, text);
  assert.ok((sample(text, 'bulwark_http_requests_total', 'method="GET",route="/api/v1/rules",status="200"') ?? 0) >= 3, text);
  assert.equal(sample(text, 'bulwark_http_requests_total', 'method="GET",route="/api/v1/metrics/prometheus",status="403"'), 1);
  assert.ok((sample(text, 'bulwark_http_request_duration_seconds_count', 'method="GET",route="/api/v1/rules"') ?? 0) >= 3);
});

test('promtool check metrics passes on the exposition', { skip: systemSkip('the promtool check', { programs: ['promtool'] }) }, async () => {
  const rule = await created('/api/v1/rules', { action: 'block', direction: 'in', protocol: 'udp', description: HOSTILE });
  kernel = [{ name: `rule_${rule.id}`, packets: 3, bytes: 180 }, { name: 'nat_masquerade', packets: 7, bytes: 700 }];
  const { text } = await scrape();
  assert.match(text, /^bulwark_pf_kernel_packets_total\{counter="nat_masquerade"\} 7$/m, 'every family present');
  const checked = spawnSync(findProgram('promtool')!, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  assert.equal(checked.status, 0, `${checked.stdout}${checked.stderr}\n--- exposition:\n${text}`);
});
