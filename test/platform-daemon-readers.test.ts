/**
 * The readers of what the daemons say: Unbound's log lines as query and block events (and nothing else),
 * the per-second bound on those events, Kea's control-channel answers (leases, statistics), chronyc's CSV
 * output and the reason given for a failed start.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseUnboundEvent } from '../src/platform/unbound-events.js';
import { PerSecondBudget } from '../src/platform/per-second-budget.js';
import { leasesOf, statisticsOf } from '../src/platform/kea-control.js';
import { parseChronySources, parseChronyTracking } from '../src/platform/chrony-state.js';
import { failureReason } from '../src/platform/process-daemons.js';
import { dnsStatsOf } from '../src/platform/unbound-state.js';

test('Unbound log lines: query-log and filter lines become events; anything else, or a malformed field, does not', () => {
  assert.deepEqual(parseUnboundEvent('[1700000000] unbound[4242:0] info: 10.0.0.2 www.example.com. AAAA IN'), {
    type: 'query', data: { ts: 1_700_000_000_000, client: '10.0.0.2', qname: 'www.example.com', qtype: 'AAAA' },
  });
  assert.deepEqual(parseUnboundEvent('[1700000001] unbound[4242:1] info: bulwark-block blocklist-5f0e nxdomain 10.0.0.2 ads.example.com A'), {
    type: 'block', data: { ts: 1_700_000_001_000, client: '10.0.0.2', qname: 'ads.example.com', qtype: 'A', action: 'nxdomain', zone: 'blocklist-5f0e' },
  });
  assert.equal((parseUnboundEvent('[1700000001] unbound[1:0] info: bulwark-block custom redirect - ads.example.com A') as { data: { client: unknown } }).data.client, null);
  for (const line of [
    '[1700000000] unbound[4242:0] info: start of service (unbound 1.17.1).',
    '[1700000000] unbound[4242:0] error: can\'t bind socket: Address already in use',
    '[1700000000] unbound[4242:0] info: bulwark-block custom nxdomain 10.0.0.2 "quoted" A',
    '[1700000000] unbound[4242:0] info: bulwark-block Custom nxdomain 10.0.0.2 ads.example.com A',
    '[1700000000] unbound[4242:0] info: bulwark-block custom explode 10.0.0.2 ads.example.com A',
    '[1700000000] unbound[4242:0] info: not-an-ip www.example.com. A IN',
    'info: 10.0.0.2 www.example.com. A IN',
  ]) assert.equal(parseUnboundEvent(line), null, line);
});

test('the event budget passes at most N a second and counts the rest', () => {
  let now = 5_000;
  const budget = new PerSecondBudget(3, () => now);
  assert.deepEqual([budget.take(), budget.take(), budget.take(), budget.take(), budget.take()], [true, true, true, false, false]);
  assert.equal(budget.dropped, 2);
  now += 999;
  assert.equal(budget.take(), false, 'still the same second');
  now += 1;
  assert.equal(budget.take(), true, 'a new second');
});

test('Kea answers: lease4-get-all (expired leases left out, "no leases" is empty) and statistic-get-all', () => {
  const subnets = new Map([[7, '10.1.0.0/24']]);
  const leases = leasesOf({
    result: 0,
    arguments: {
      leases: [
        { 'ip-address': '10.1.0.100', 'hw-address': '02:42:0A:EA:00:99', hostname: 'laptop', 'valid-lft': 3600, cltt: 1_700_000_000, 'subnet-id': 7, state: 0 },
        { 'ip-address': '10.1.0.101', 'hw-address': '02:00:00:00:00:01', 'valid-lft': 3600, cltt: 1_700_000_000, 'subnet-id': 7, state: 2 },
        { 'ip-address': '10.1.0.102', 'hw-address': '02:00:00:00:00:02', 'valid-lft': 60, cltt: 1_700_000_100, 'subnet-id': 7, state: 1 },
      ],
    },
  }, subnets);
  assert.deepEqual(leases, [
    { ip_address: '10.1.0.100', mac_address: '02:42:0a:ea:00:99', hostname: 'laptop', client_id: null, state: 'bound', lease_time: 3600, start_time: 1_700_000_000, expire_time: 1_700_003_600, subnet: '10.1.0.0/24' },
    { ip_address: '10.1.0.102', mac_address: '02:00:00:00:00:02', hostname: null, client_id: null, state: 'declined', lease_time: 60, start_time: 1_700_000_100, expire_time: 1_700_000_160, subnet: '10.1.0.0/24' },
  ]);
  assert.deepEqual(leasesOf({ result: 3, text: '0 IPv4 lease(s) found.' }, subnets), []);
  assert.throws(() => leasesOf({ result: 2, text: "'lease4-get-all' command not supported." }, subnets), /result 2/);

  const statistics = statisticsOf({
    result: 0,
    arguments: {
      'pkt4-received': [[12, '2024-01-01 00:00:02.000'], [10, '2024-01-01 00:00:01.000']],
      'pkt4-ack-sent': [[4, '2024-01-01 00:00:02.000']],
      'subnet[7].total-addresses': [[51, '2024-01-01 00:00:00.000']],
      'subnet[7].assigned-addresses': [[2, '2024-01-01 00:00:02.000']],
      'subnet[7].declined-addresses': [[0, '2024-01-01 00:00:00.000']],
      'subnet[9].total-addresses': [[10, '2024-01-01 00:00:00.000']],
    },
  }, subnets);
  assert.deepEqual(statistics, {
    subnets: [{ subnet: '10.1.0.0/24', total_addresses: 51, assigned_addresses: 2, declined_addresses: 0 }],
    counters: { 'pkt4-received': 12, 'pkt4-ack-sent': 4 },
  });
});

test('chronyc -c: tracking and sources as chrony prints them', () => {
  const sources = parseChronySources('^,*,10.235.0.2,8,0,377,1,-0.000001234,-0.000001500,0.000050000\n^,?,192.0.2.9,0,6,0,-,+0.000000000,+0.000000000,0.000000000\n');
  assert.deepEqual(sources, [
    { address: '10.235.0.2', state: 'selected', stratum: 8, offset_ms: -0.001, reach: 377 },
    { address: '192.0.2.9', state: 'unreachable', stratum: 0, offset_ms: 0, reach: 0 },
  ]);
  const tracking = parseChronyTracking('0AEB0002,10.235.0.2,9,1700000000.123456789,0.000002345,0.000001000,0.000003000,-1.234,0.001,0.010,0.000123000,0.000456000,1.0,Normal\n', sources);
  assert.deepEqual({ ...tracking, sources: [] }, { synchronized: true, reference: '10.235.0.2', stratum: 9, offset_ms: 0.002, sources: [] });
  const unsynchronised = parseChronyTracking('00000000,,0,0.000000000,0.000000000,0.000000000,0.000000000,0.000,0.000,0.000,1.000000000,1.000000000,0.0,Not synchronised\n', []);
  assert.equal(unsynchronised.synchronized, false);
  assert.equal(unsynchronised.reference, null);
});

test('a failed start is explained by the daemon\'s last error lines, printable and without its log prefix', () => {
  assert.equal(failureReason([
    '[1700000000] unbound[10:0] notice: init module 0: python',
    '[1700000000] unbound[10:0] error: bind: address already in use',
    '[1700000000] unbound[10:0] fatal error: could not open ports',
    'unbound exited (status 1)',
  ]), 'error: bind: address already in use; fatal error: could not open ports');
  assert.equal(failureReason(['starting', 'ready \u001b[31mnow']), 'ready [31mnow');
  assert.equal(failureReason([]), null);
});

test('DNS statistics combine unbound-control counters with the filter zones and block hits', () => {
  const stats = dnsStatsOf(
    { 'total.num.queries': 40, 'total.num.cachehits': 10, 'total.num.cachemiss': 30, 'msg.cache.count': 5, 'rrset.cache.count': 7 },
    [{ label: 'custom', names: 2 }, { label: 'blocklist-a', names: 1000 }],
    new Map([['blocklist-a', 6]]),
  );
  assert.equal(stats.queries_total, 40);
  assert.equal(stats.cache.hit_rate_pct, 25);
  assert.equal(stats.cache.entries, 12);
  assert.deepEqual(stats.rpz, { rules: 1002, zones: 2, hits: 6, per_zone: [{ name: 'custom', rules: 2, hits: 0 }, { name: 'blocklist-a', rules: 1000, hits: 6 }] });
});
