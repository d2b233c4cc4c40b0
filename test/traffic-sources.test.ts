import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConntrack } from '../src/platform/linux/conntrack.js';
import { parseConntrackNewEvent } from '../src/platform/linux/conntrack-events.js';
import { readInterfaceCounters } from '../src/platform/linux/traffic.js';
import { parseNftRuleCounters } from '../src/platform/linux/nft-listing.js';
import { parseUlogdJson, renderUlogdConfig } from '../src/platform/linux/ulogd-reader.js';
import { FreebsdTraffic } from '../src/platform/freebsd/traffic.js';
import { SimulatedTraffic } from '../src/platform/simulated/traffic.js';
import { flowKey } from '../src/live/flow-frames.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/traffic/${name}`, import.meta.url), 'utf8');

test('conntrack -o extended: tuples, accounting, age, states; the reply direction is "in"', () => {
  const flows = parseConntrack(fixture('conntrack-extended.txt'));
  assert.equal(flows.length, 4);
  assert.deepEqual(flows[0], {
    id: 2340483312, protocol: 'tcp', src_addr: '10.99.0.1', src_port: 53552, dst_addr: '10.99.0.2', dst_port: 8000, state: 'TIME_WAIT',
    packets_in: 7, packets_out: 7, bytes_in: 894, bytes_out: 390, age_secs: 12,
  });
  assert.equal(flows[1].state, 'UNREPLIED');
  assert.equal(flows[1].age_secs, 1);
  assert.equal(flows[2].protocol, 'icmp');
  assert.equal(flows[2].src_port, 0);
  assert.equal(flowKey(flows[3]), 'tcp|2001:db8::1:40000|2001:db8::2:443');
  assert.equal(flows[3].bytes_in, 90000);
});

test('ulogd2 JSON lines (NFLOG) become blocked entries; the config names the group and our file', () => {
  const line = '{"timestamp": "2026-11-21T22:09:14.825025", "oob.prefix": "bulwark block 3f2a: ", "oob.time.sec": 1795298954, "oob.time.usec": 825025, "oob.in": "vB", "oob.out": "", "ip.protocol": 6, "src_port": 49528, "dest_port": 9999, "src_ip": "10.99.0.1", "dest_ip": "10.99.0.2"}';
  assert.deepEqual(parseUlogdJson(line), {
    timestamp: '2026-11-21T22:09:14.825025Z', action: 'block', direction: 'in', interface: 'vB', protocol: 'tcp',
    src_addr: '10.99.0.1', src_port: 49528, dst_addr: '10.99.0.2', dst_port: 9999, reason: 'policy', rule_id: '3f2a',
  });
  assert.equal(parseUlogdJson('{"oob.prefix": "x"}'), null, 'no source address: skipped');
  assert.equal(parseUlogdJson('not json'), null);
  const config = renderUlogdConfig('/usr/lib/x86_64-linux-gnu/ulogd', 5, '/data/ulogd/blocked.json');
  assert.match(config, /\[log1\]\ngroup=5/);
  assert.match(config, /stack=log1:NFLOG,base1:BASE,ifi1:IFINDEX,ip2str1:IP2STR,json1:JSON/);
  assert.match(config, /file="\/data\/ulogd\/blocked.json"/);
  assert.match(config, /^logfile="stdout"$/m, 'its own lines go to the supervised output, which is cut back, not to a file that grows');
});

test('nftables anonymous rule counters: the lines of one rule comment are summed, other tables and comments ignored', () => {
  const rule = (table: string, comment: string, packets: number, bytes: number) =>
    ({ rule: { family: 'inet', table, chain: 'in_x', handle: 3, comment, expr: [{ match: {} }, { counter: { packets, bytes } }, { accept: null }] } });
  const counters = parseNftRuleCounters(JSON.stringify({ nftables: [
    { metainfo: { version: '1.0.6' } },
    rule('bulwark', 'rule abc', 12, 3456), rule('bulwark', 'rule abc', 3, 44), rule('bulwark', 'nat n1', 1, 60),
    rule('other', 'rule abc', 1000, 1000), rule('bulwark', 'system: loopback', 7, 7),
  ] }));
  assert.deepEqual(counters, [{ name: 'rule_abc', packets: 15, bytes: 3500 }, { name: 'nat_n1', packets: 1, bytes: 60 }]);
});

test('nftables counter objects: a rule\'s lines count into rule_<id>, read from the object (the lines name it); traffic counters are no rule', () => {
  const object = (table: string, name: string, packets: number) => ({ counter: { family: 'inet', table, name, handle: 2, packets, bytes: packets * 10 } });
  const line = { rule: { family: 'inet', table: 'bulwark', chain: 'in_x', handle: 9, comment: 'rule abc', expr: [{ counter: 'rule_abc' }, { accept: null }] } };
  assert.deepEqual(parseNftRuleCounters(JSON.stringify({ nftables: [
    object('bulwark', 'traffic_in', 500), object('bulwark', 'rule_abc', 7), object('other', 'rule_abc', 1000), line,
  ] })), [{ name: 'rule_abc', packets: 7, bytes: 70 }]);
});

test('sysfs interface counters are read per interface', async () => {
  const root = mkdtempSync(join(tmpdir(), 'bulwark-sysfs-'));
  try {
    for (const [name, values] of [['eth0', [100, 200, 3, 4]], ['lo', [5, 5, 1, 1]]] as const) {
      const dir = join(root, name, 'statistics');
      (await import('node:fs')).mkdirSync(dir, { recursive: true });
      ['rx_bytes', 'tx_bytes', 'rx_packets', 'tx_packets'].forEach((file, i) => writeFileSync(join(dir, file), `${values[i]}\n`));
    }
    assert.deepEqual(await readInterfaceCounters(root), [
      { name: 'eth0', bytes_in: 100, bytes_out: 200, packets_in: 3, packets_out: 4 },
      { name: 'lo', bytes_in: 5, bytes_out: 5, packets_in: 1, packets_out: 1 },
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('freebsd: pfctl states, netstat counters, pf labels and pflog through tcpdump, with fake tools on PATH', async () => {
  const bin = mkdtempSync(join(tmpdir(), 'bulwark-fakebsd-'));
  const calls = join(bin, 'calls.log');
  const tool = (name: string, output: string) => {
    writeFileSync(join(bin, `${name}.out`), output);
    writeFileSync(join(bin, name), `#!/bin/sh\necho "${name} $*" >> "${calls}"\ncat "${join(bin, `${name}.out`)}"\n`);
    chmodSync(join(bin, name), 0o755);
  };
  tool('pfctl', fixture('pfctl-states-v.txt'));
  tool('netstat', fixture('netstat-ibn.json'));
  tool('tcpdump', fixture('pflog-tcpdump.txt'));
  const savedPath = process.env.PATH;
  process.env.PATH = `${bin}:${savedPath}`;
  try {
    const traffic = new FreebsdTraffic();
    const table = await traffic.connections();
    assert.equal(table.total, 2);
    assert.deepEqual(table.flows[0], {
      id: 1, protocol: 'tcp', src_addr: '192.168.1.100', src_port: 54321, dst_addr: '192.168.1.10', dst_port: 22, state: 'ESTABLISHED:ESTABLISHED',
      packets_in: 98, packets_out: 120, bytes_in: 23456, bytes_out: 15432, age_secs: 312, iface: 'em0',
    });
    assert.equal(table.flows[1].src_addr, '10.0.0.5', 'the NAT rewrite in parentheses is dropped');
    assert.equal(table.flows[1].age_secs, 93_600);
    assert.deepEqual(await traffic.interfaces(), [
      { name: 'em0', bytes_in: 900000, bytes_out: 120000, packets_in: 1200, packets_out: 800 },
      { name: 'lo0', bytes_in: 1000, bytes_out: 1000, packets_in: 10, packets_out: 10 },
    ]);
    const blocked = await traffic.blocked(10);
    assert.equal(blocked.length, 3);
    assert.deepEqual(blocked[2], {
      timestamp: '2026-11-21T22:09:14.825025Z', action: 'block', direction: 'in', interface: 'em0', protocol: 'tcp',
      src_addr: '203.0.113.9', src_port: 49528, dst_addr: '192.168.1.1', dst_port: 22, reason: 'policy', rule_id: null,
    });
    assert.equal(blocked[1].protocol, 'udp');
    assert.equal(blocked[0].protocol, 'icmp');
    assert.equal(blocked[0].direction, 'out');
    assert.equal(blocked[0].src_port, 0);
    const log = readFileSync(calls, 'utf8');
    assert.match(log, /pfctl -s states -v/);
    assert.match(log, /netstat -i -b -n --libxo json/);
    assert.match(log, /tcpdump -n -e -tttt -r \/var\/log\/pflog/);
  } finally {
    process.env.PATH = savedPath;
    rmSync(bin, { recursive: true, force: true });
  }
});

test('simulated traffic is a deterministic model: same second, same table; flows churn and go idle over time', async () => {
  const a = new SimulatedTraffic({ slots: 200 });
  const b = new SimulatedTraffic({ slots: 200 });
  const t0 = 1_800_000_000;
  assert.deepEqual(a.flowsAt(t0), b.flowsAt(t0));
  const before = new Map(a.flowsAt(t0).map((f) => [flowKey(f), f]));
  const after = a.flowsAt(t0 + 1);
  const unchanged = after.filter((f) => before.get(flowKey(f))?.bytes_in === f.bytes_in && before.get(flowKey(f))?.bytes_out === f.bytes_out).length;
  assert.ok(unchanged > 50 && unchanged < 200, `${unchanged} of 200 flows idle for a second`);
  const later = new Set(a.flowsAt(t0 + 600).map(flowKey));
  const replaced = [...before.keys()].filter((k) => !later.has(k)).length;
  assert.ok(replaced > 100, `${replaced} flows replaced after 10 minutes`);
  assert.ok(a.flowsAt(t0).every((f) => /^(192\.0\.2|198\.51\.100|203\.0\.113)\./.test(f.dst_addr)), 'documentation ranges only');
});

test('conntrack NEW events: the original tuple of `conntrack -E -e NEW -o extended,id` lines; other lines are not events', () => {
  assert.deepEqual(
    parseConntrackNewEvent('    [NEW] ipv4     2 tcp      6 120 SYN_SENT src=10.238.1.2 dst=10.238.2.2 sport=40112 dport=8431 [UNREPLIED] src=10.238.2.2 dst=10.238.1.2 sport=8431 dport=40112 id=3141592'),
    { id: 3141592, protocol: 'tcp', src_addr: '10.238.1.2', src_port: 40112, dst_addr: '10.238.2.2', dst_port: 8431 },
  );
  assert.deepEqual(
    parseConntrackNewEvent(' [NEW] ipv6 10 udp 17 30 src=2001:db8::2 dst=2001:db8:1::2 sport=5353 dport=53 [UNREPLIED] src=2001:db8:1::2 dst=2001:db8::2 sport=53 dport=5353 id=7'),
    { id: 7, protocol: 'udp', src_addr: '2001:db8::2', src_port: 5353, dst_addr: '2001:db8:1::2', dst_port: 53 },
  );
  assert.equal(parseConntrackNewEvent(' [DESTROY] ipv4 2 tcp 6 src=10.0.0.1 dst=10.0.0.2 sport=1 dport=2 id=1'), null);
  assert.equal(parseConntrackNewEvent('conntrack v1.4.7 (conntrack-tools): 0 flow events have been shown.'), null);
});
