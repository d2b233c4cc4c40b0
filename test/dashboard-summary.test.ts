import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summariseTable } from '../src/areas/dashboard/service.js';
import type { Flow } from '../src/platform/connections.js';

/** The one-pass summary equals the obvious computation (group, sort every talker, take ten) on random tables. */
test('table summary: counts, DNS, fresh flows and the ten top talkers (bytes, then address) as a full sort gives them', () => {
  let seed = 19;
  const next = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
  for (let round = 0; round < 20; round++) {
    const flows: Flow[] = Array.from({ length: Math.floor(next() * 3000) }, (_, i) => ({
      id: i, protocol: ['tcp', 'udp', 'icmp', 'icmpv6', 'gre'][Math.floor(next() * 5)], src_addr: `10.0.${Math.floor(next() * 4)}.${Math.floor(next() * 40)}`, src_port: 1000,
      dst_addr: '192.0.2.1', dst_port: [53, 443, 853][Math.floor(next() * 3)], state: ['ESTABLISHED', 'SYN_SENT', 'TIME_WAIT'][Math.floor(next() * 3)],
      packets_in: 1, packets_out: 1, bytes_in: Math.floor(next() * 5) * 100, bytes_out: Math.floor(next() * 3) * 100, age_secs: Math.floor(next() * 10),
    }));
    const talkers = new Map<string, { bytes_in: number; bytes_out: number; flows: number }>();
    for (const flow of flows) {
      const t = talkers.get(flow.src_addr) ?? { bytes_in: 0, bytes_out: 0, flows: 0 };
      t.bytes_in += flow.bytes_in;
      t.bytes_out += flow.bytes_out;
      t.flows++;
      talkers.set(flow.src_addr, t);
    }
    const expected = [...talkers].map(([addr, t]) => ({ addr, ...t, bytes: t.bytes_in + t.bytes_out }))
      .sort((a, b) => b.bytes - a.bytes || (a.addr < b.addr ? -1 : 1)).slice(0, 10);
    const summary = summariseTable(flows, flows.length + 5, 5);
    assert.deepEqual(summary.topTalkers, expected);
    assert.equal(summary.summary.tcp + summary.summary.udp + summary.summary.icmp + summary.summary.other, flows.length);
    assert.equal(summary.summary.icmp, flows.filter((f) => f.protocol.startsWith('icmp')).length);
    assert.equal(summary.summary.by_state.TIME_WAIT ?? 0, flows.filter((f) => f.state === 'TIME_WAIT').length);
    assert.equal(summary.dns.flows, flows.filter((f) => f.dst_port === 53 || f.dst_port === 853).length);
    assert.equal(summary.fresh, flows.filter((f) => f.age_secs < 5).length);
    assert.equal(summary.summary.total, flows.length + 5);
  }
});
