/**
 * Platform drivers: freebsd through a fake pfctl on PATH that records what it is given; linux through the
 * real nft inside a network namespace this test creates (root only); simulated keeps text and counters.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFreebsdPlatform } from '../src/platform/freebsd/index.js';
import { parsePfRuleCounters } from '../src/platform/freebsd/packet-filter.js';
import { parseIfconfigAddresses, parsePfStates } from '../src/platform/freebsd/pf-states.js';
import { NftablesPacketFilter } from '../src/platform/linux/packet-filter.js';
import { nftablesStatus } from '../src/platform/linux/nft-status.js';
import { crossingsOf, parseTrackedFlows } from '../src/platform/linux/conntrack-cut.js';
import { scheduleEdge } from '../src/compile/schedule-edges.js';
import { SimulatedPacketFilter } from '../src/platform/simulated/packet-filter.js';
import { runCommand } from '../src/platform/exec.js';
import { compileNftables } from '../src/compile/nftables.js';
import { json } from './helpers/app.js';
import { startAreaApp } from './helpers/area-app.js';
import { rootSkipReason } from './helpers/shared.js';
import { config, fixtureId, rule, schedule } from './helpers/firewall-fixtures.js';
import { packetFilterOf } from './helpers/areas.js';

const fakeDir = mkdtempSync(join(tmpdir(), 'bulwark-fake-pfctl-'));
const FAKE_PFCTL = `#!/bin/sh
# Fake pfctl: records each call (arguments, then stdin when -f - is given) and answers like pfctl would.
dir="${fakeDir}"
n=$(ls "$dir"/call-* 2>/dev/null | wc -l)
echo "$*" > "$dir/call-$n.args"
case " $* " in
  *" -f - "*|*" -f -") cat > "$dir/call-$n.input" ;;
esac
if [ -e "$dir/refuse" ] && [ "$3" = "-f" -o "$4" = "-f" ]; then
  echo "stdin:14: syntax error" >&2
  exit 1
fi
case "$*" in
  "-a bulwark -f -") rm -f "$dir/anchor-rules.txt" # a load replaces the anchor, whatever was changed by hand
    [ -e "$dir/loads-reset-counters" ] && rm -f "$dir/rules-v.txt" ;; # and, when the test says so, its counters
  "-s info") cat "$dir/info.txt" ;;
  "-s nat") cat "$dir/main-nat.txt" ;;
  "-s rules") cat "$dir/main-rules.txt" ;;
  "-a bulwark -s rules") cat "$dir/anchor-rules.txt" 2>/dev/null || printf 'pass in quick proto tcp all\\nblock in quick all\\n' ;;
  "-a bulwark -v -s rules") cat "$dir/rules-v.txt" ;;
  "-a bulwark -s Tables") cat "$dir/tables.txt" 2>/dev/null ;;
  "-s states -v -v") cat "$dir/states.txt" 2>/dev/null ;;
esac
exit 0
`;
writeFileSync(join(fakeDir, 'pfctl'), FAKE_PFCTL);
chmodSync(join(fakeDir, 'pfctl'), 0o755);
const PF_VERBOSE = `pass in quick inet proto tcp from any to (self) port = 8080 flags S/SA keep state label "bulwark:anti-lockout"
  [ Evaluations: 40        Packets: 12        Bytes: 3400        States: 1     ]
  [ Inserted: uid 0 pid 4242 State Creations: 1     ]
block drop in log quick proto tcp from any to any port = 8081 label "${fixtureId(1)}"
  [ Evaluations: 15        Packets: 9         Bytes: 540         States: 0     ]
  [ Inserted: uid 0 pid 4242 State Creations: 0     ]
`;
writeFileSync(join(fakeDir, 'rules-v.txt'), PF_VERBOSE);
/** The main ruleset as pfctl shows it on a host set up as docs/packet-filter.md says. */
const PF_ENABLED = 'Status: Enabled for 0 days 01:02:03\nState Table\n  current entries 7\n';
const MAIN_NAT = 'nat-anchor "bulwark" all\nrdr-anchor "bulwark" all\nbinat-anchor "bulwark" all\n';
const MAIN_RULES = 'block drop in log on ! em0 inet from 10.0.0.0/8 to any\nanchor "bulwark" all\n';
const setUpHost = () => {
  writeFileSync(join(fakeDir, 'info.txt'), PF_ENABLED);
  writeFileSync(join(fakeDir, 'main-nat.txt'), MAIN_NAT);
  writeFileSync(join(fakeDir, 'main-rules.txt'), MAIN_RULES);
};
setUpHost();
// sysctl: net.pf.request_maxcount as the test sets it (FreeBSD's default otherwise).
writeFileSync(join(fakeDir, 'sysctl'), `#!/bin/sh\n[ "$*" = "-n net.pf.request_maxcount" ] || exit 1\ncat "${fakeDir}/maxcount" 2>/dev/null || echo 65535\n`);
chmodSync(join(fakeDir, 'sysctl'), 0o755);
// ifconfig: the host's addresses (FreeBSD's format), for rules on "interface address" and anti-lockout.
writeFileSync(join(fakeDir, 'ifconfig'), `#!/bin/sh\n[ "$*" = "-a" ] || exit 1\ncat "${fakeDir}/ifconfig.txt"\n`);
chmodSync(join(fakeDir, 'ifconfig'), 0o755);
writeFileSync(join(fakeDir, 'ifconfig.txt'), [
  'em1: flags=8843<UP,BROADCAST,RUNNING,SIMPLEX,MULTICAST> metric 0 mtu 1500',
  '\tether 58:9c:fc:00:00:01',
  '\tinet 10.0.0.1 netmask 0xffffff00 broadcast 10.0.0.255',
  '\tinet6 fe80::1%em1 prefixlen 64 scopeid 0x1',
  'em2: flags=8843<UP,BROADCAST,RUNNING,SIMPLEX,MULTICAST> metric 0 mtu 1500',
  '\tinet 10.9.0.1 netmask 0xffffff00 broadcast 10.9.0.255',
  'lo0: flags=8049<UP,LOOPBACK,RUNNING,MULTICAST> metric 0 mtu 16384',
  '\tinet 127.0.0.1 netmask 0xff000000',
  '',
].join('\n'));
process.env.PATH = `${fakeDir}:${process.env.PATH}`;
after(() => rmSync(fakeDir, { recursive: true, force: true }));

const calls = () =>
  readdirSync(fakeDir).filter((f) => f.endsWith('.args')).sort((a, b) => Number(a.split('-')[1].split('.')[0]) - Number(b.split('-')[1].split('.')[0]))
    .map((f) => ({ args: readFileSync(join(fakeDir, f), 'utf8').trim(), input: existsSync(join(fakeDir, f.replace('.args', '.input'))) ? readFileSync(join(fakeDir, f.replace('.args', '.input')), 'utf8') : undefined }));
const clearCalls = () => { for (const f of readdirSync(fakeDir)) if (f.startsWith('call-')) rmSync(join(fakeDir, f)); };

test('freebsd: reload loads the anchor with one pfctl -a bulwark -f - (no pfctl -n first); a refusal keeps the old ruleset', async () => {
  const t = await startAreaApp({ platform: createFreebsdPlatform() });
  const headers = t.headers;
  try {
    const created = json(await t.app.inject({ method: 'POST', url: '/api/v1/rules', payload: { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: 8081 }, headers }));
    clearCalls();
    const reload = await t.app.inject({ method: 'POST', url: '/api/v1/reload', headers });
    assert.equal(reload.statusCode, 200, reload.body);
    assert.equal(json(reload).dialect, 'pf');
    const loads = () => calls().filter((c) => c.args.endsWith('-f -'));
    assert.deepEqual(loads().map((c) => c.args), ['-a bulwark -f -'], 'one load, no separate check');
    const [load] = loads();
    assert.equal(json(reload).apply_mode, 'full', 'pf replaces the whole anchor');
    assert.match(load.input!, new RegExp(`block in log quick proto tcp to any port 8081 label "${created.id}"`));
    assert.match(load.input!, /pass in quick inet proto tcp from any to \(self\) port \d+ keep state label "bulwark:anti-lockout"/);

    // pfctl refuses: 409 with its message, nothing loaded, the change stays pending.
    await t.app.inject({ method: 'PUT', url: `/api/v1/rules/${created.id}`, payload: { dst_port_start: 8082 }, headers });
    writeFileSync(join(fakeDir, 'refuse'), '');
    clearCalls();
    const refused = await t.app.inject({ method: 'POST', url: '/api/v1/reload', headers });
    rmSync(join(fakeDir, 'refuse'));
    assert.equal(refused.statusCode, 409);
    assert.match(json(refused).error, /pf or the kernel refused the ruleset; the previous ruleset stays in force: pfctl refused line 14 \(pass\): syntax error/);
    assert.deepEqual(loads().map((c) => c.args), ['-a bulwark -f -'], 'the one load was refused (pfctl loads an anchor atomically: nothing changed)');
    const pending = json(await t.app.inject({ url: '/api/v1/pending', headers }));
    assert.deepEqual(pending.changes.rules.changed, [created.id]);

    const system = json(await t.app.inject({ url: '/api/v1/rules/system', headers }));
    assert.ok(system.some((line: string) => line.startsWith('pass in quick inet proto tcp from any to (self)')));
    const status = json(await t.app.inject({ url: '/api/v1/status', headers }));
    assert.equal(status.pf_backend, 'pf');
    assert.equal(status.pf_states, 7);
    assert.equal(status.pf_rules, 2);
    const counters = await t.app.context.platform.packetFilter.counters();
    assert.deepEqual(counters, [
      { name: 'bulwark:anti-lockout', packets: 12, bytes: 3400 },
      { name: fixtureId(1), packets: 9, bytes: 540 },
    ]);
  } finally {
    await t.close();
  }
});

test('freebsd: pf label counters show on GET /rules at once, and a reload (pf loads the whole anchor) loses none', async () => {
  const t = await startAreaApp({ platform: createFreebsdPlatform() });
  const headers = t.headers;
  const counted = (id: string, packets: number) => writeFileSync(join(fakeDir, 'rules-v.txt'),
    `block drop in log quick proto tcp from any to any port = 8081 label "${id}"\n  [ Evaluations: 15        Packets: ${packets}         Bytes: ${packets * 60}         States: 0     ]\n`);
  try {
    const created = json(await t.app.inject({ method: 'POST', url: '/api/v1/rules', payload: { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: 8081 }, headers }));
    writeFileSync(join(fakeDir, 'loads-reset-counters'), '');
    assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/reload', headers })).statusCode, 200);
    const hits = async () => json(await t.app.inject({ url: '/api/v1/rules', headers })).find((r: any) => r.id === created.id).hits;
    counted(created.id, 9);
    t.clock.advance(5000);
    assert.deepEqual(await hits(), { packets: 9, bytes: 540 }, 'read when asked 5 s on, not a minute later');
    counted(created.id, 12);
    // The load starts the labels' counters from zero (the fake removes them): the 3 counted before it stay.
    assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/reload', headers })).statusCode, 200);
    assert.deepEqual(await hits(), { packets: 12, bytes: 720 });
    counted(created.id, 2);
    t.clock.advance(5000);
    assert.deepEqual(await hits(), { packets: 14, bytes: 840 }, 'counting on from zero');
  } finally {
    rmSync(join(fakeDir, 'loads-reset-counters'), { force: true });
    writeFileSync(join(fakeDir, 'rules-v.txt'), PF_VERBOSE);
    await t.close();
  }
});

test('freebsd: the anchor is read back after each load; a rule changed by hand is drift in /status; reload replaces the anchor and clears it', async () => {
  const t = await startAreaApp({ platform: createFreebsdPlatform() });
  const headers = t.headers;
  const status = async () => json(await t.app.inject({ url: '/api/v1/status', headers }));
  try {
    await t.app.inject({ method: 'POST', url: '/api/v1/rules', payload: { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: 8081 }, headers });
    clearCalls();
    assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/reload', headers })).statusCode, 200);
    await packetFilterOf(t.app).checkDrift();
    assert.ok(calls().some((c) => c.args === '-a bulwark -s rules') && calls().some((c) => c.args === '-a bulwark -s nat'), 'read back with pfctl -a bulwark -s rules / -s nat / -s Tables');
    assert.equal((await status()).drift, false);

    writeFileSync(join(fakeDir, 'anchor-rules.txt'), 'pass in quick proto tcp all\n'); // someone ran pfctl by hand
    await packetFilterOf(t.app).checkDrift();
    const drifted = await status();
    assert.equal(drifted.drift, true);
    assert.equal(drifted.status, 'degraded');
    assert.deepEqual(drifted.drift_check.differences, ['rules: 1 entries, 2 expected']);

    const repaired = await t.app.inject({ method: 'POST', url: '/api/v1/reload', headers });
    assert.equal(json(repaired).apply_mode, 'full');
    await packetFilterOf(t.app).checkDrift();
    assert.equal((await status()).drift, false, 'the load replaced the anchor');
  } finally {
    rmSync(join(fakeDir, 'anchor-rules.txt'), { force: true });
    await t.close();
  }
});

test('freebsd: pf disabled or a pf.conf hook missing (binat-anchor included, filter hook last) → /status reports it, reload is 409 naming the line', async () => {
  const t = await startAreaApp({ platform: createFreebsdPlatform() });
  const headers = t.headers;
  const get = async (url: string) => json(await t.app.inject({ url, headers }));
  try {
    await t.app.inject({ method: 'POST', url: '/api/v1/nat', payload: { nat_type: 'binat', interface: 'em0', protocol: 'any', src_addr: '192.168.1.7', redirect_addr: '203.0.113.7' }, headers });
    const healthy = await get('/api/v1/status');
    assert.equal(healthy.status, 'ok');
    assert.equal(healthy.pf_problems, undefined);

    const cases: [string, () => void, RegExp][] = [
      ['pf disabled', () => writeFileSync(join(fakeDir, 'info.txt'), 'Status: Disabled for 0 days 00:00:01\n'), /pf is disabled: set pf_enable="YES" in \/etc\/rc\.conf/],
      ['binat hook missing', () => writeFileSync(join(fakeDir, 'main-nat.txt'), 'nat-anchor "bulwark" all\nrdr-anchor "bulwark" all\n'), /add the line binat-anchor "bulwark"/],
      ['nat hook missing', () => writeFileSync(join(fakeDir, 'main-nat.txt'), 'rdr-anchor "bulwark" all\nbinat-anchor "bulwark" all\n'), /add the line nat-anchor "bulwark"/],
      ['filter hook missing', () => writeFileSync(join(fakeDir, 'main-rules.txt'), 'pass all\n'), /add the line anchor "bulwark" as the last rule/],
      ['filter hook not last', () => writeFileSync(join(fakeDir, 'main-rules.txt'), 'anchor "bulwark" all\nblock in all\npass out all\n'), /2 rules come after the line anchor "bulwark"; it must be the last rule/],
    ];
    for (const [name, breakHost, line] of cases) {
      setUpHost();
      breakHost();
      clearCalls();
      const reload = await t.app.inject({ method: 'POST', url: '/api/v1/reload', headers });
      assert.equal(reload.statusCode, 409, `${name}: ${reload.body}`);
      assert.match(json(reload).error, /the packet filter is not set up to use it; the previous ruleset stays in force: /, name);
      assert.match(json(reload).error, line, name);
      assert.deepEqual(calls().filter((c) => c.args.endsWith('-f -')), [], `${name}: nothing checked or loaded`);
      // /status shows what the last check found (it reads the host again at most every 10 s by itself).
      const status = await get('/api/v1/status');
      assert.equal(status.status, 'degraded', name);
      assert.equal(status.pf_problems.length, 1, `${name}: ${JSON.stringify(status.pf_problems)}`);
      assert.match(status.pf_problems[0], line, name);
      const check = await get('/api/v1/config/check');
      assert.ok(check.errors.some((e: string) => line.test(e)), `${name}: config check reports it: ${JSON.stringify(check.errors)}`);
    }
    setUpHost();
    const reload = await t.app.inject({ method: 'POST', url: '/api/v1/reload', headers });
    assert.equal(reload.statusCode, 200, reload.body);
  } finally {
    setUpHost();
    await t.close();
  }
  // /status reads the host by itself too, without a reload.
  writeFileSync(join(fakeDir, 'info.txt'), 'Status: Disabled for 0 days 00:00:01\n');
  const fresh = await startAreaApp({ platform: createFreebsdPlatform() });
  try {
    const status = json(await fresh.app.inject({ url: '/api/v1/status', headers: fresh.headers }));
    assert.deepEqual(status.pf_problems, ['pf is disabled: set pf_enable="YES" in /etc/rc.conf and run "service pf start" (or "pfctl -e")']);
  } finally {
    setUpHost();
    await fresh.close();
  }
});

test('freebsd: a table over net.pf.request_maxcount is refused at check time; a deleted alias\'s table is removed after reload', async () => {
  const t = await startAreaApp({ platform: createFreebsdPlatform() });
  const headers = t.headers;
  try {
    const big = json(await t.app.inject({ method: 'POST', url: '/api/v1/aliases', payload: { name: 'big', alias_type: 'host', entries: ['10.0.0.1', '10.0.0.3', '10.0.0.5', '10.0.0.7'] }, headers }));
    writeFileSync(join(fakeDir, 'maxcount'), '3\n');
    const check = json(await t.app.inject({ url: '/api/v1/config/check', headers }));
    assert.ok(check.errors.some((e: string) => /alias "big" loads 4 address blocks, more than net\.pf\.request_maxcount \(3\)/.test(e)), JSON.stringify(check.errors));
    clearCalls();
    const refused = await t.app.inject({ method: 'POST', url: '/api/v1/reload', headers });
    assert.equal(refused.statusCode, 409);
    assert.match(json(refused).error, /alias "big" loads 4 address blocks/);
    assert.deepEqual(calls().filter((c) => c.args.endsWith('-f -')), [], 'nothing loaded');
    rmSync(join(fakeDir, 'maxcount'));

    // The kernel still holds <old> (a persist table of an alias deleted since): it is killed after the load.
    writeFileSync(join(fakeDir, 'tables.txt'), '   big\n   old\n');
    clearCalls();
    const reload = await t.app.inject({ method: 'POST', url: '/api/v1/reload', headers });
    assert.equal(reload.statusCode, 200, reload.body);
    const args = calls().map((c) => c.args);
    assert.ok(args.includes('-a bulwark -t old -T kill'), JSON.stringify(args));
    assert.ok(!args.some((a) => a.includes('-t big')), 'a declared table is left alone');
    assert.ok(args.indexOf('-a bulwark -t old -T kill') > args.indexOf('-a bulwark -f -'), 'only after the new ruleset is loaded');
    assert.match(calls().find((c) => c.args === '-a bulwark -f -')!.input!, /^table <big> persist \{ 10\.0\.0\.1, 10\.0\.0\.3, 10\.0\.0\.5, 10\.0\.0\.7 \}$/m);
    await t.app.inject({ method: 'DELETE', url: `/api/v1/aliases/${big.id}`, headers });
  } finally {
    rmSync(join(fakeDir, 'tables.txt'), { force: true });
    rmSync(join(fakeDir, 'maxcount'), { force: true });
    await t.close();
  }
});

test('freebsd: when a scheduled pass rule leaves its window its states are killed by label (pfctl -k label -k <rule id>)', async () => {
  const t = await startAreaApp({ platform: createFreebsdPlatform() });
  const headers = t.headers;
  const post = async (url: string, payload: unknown) => json(await t.app.inject({ method: 'POST', url, payload: payload as object, headers }));
  try {
    t.clock.set(new Date(2026, 0, 7, 10, 0).getTime());
    const office = await post('/api/v1/schedules', { name: 'office', time_ranges: '09:00-17:00' });
    const ssh = await post('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: 22, schedule_id: office.id });
    assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/reload', headers })).statusCode, 200);
    clearCalls();
    t.clock.set(new Date(2026, 0, 7, 17, 30).getTime());
    assert.equal(await packetFilterOf(t.app).applySchedules(), true);
    const args = calls().map((c) => c.args);
    assert.ok(args.includes(`-k label -k ${ssh.id}`), JSON.stringify(args));
    assert.ok(args.indexOf(`-k label -k ${ssh.id}`) > args.indexOf('-a bulwark -f -'), 'after the ruleset without the rule is loaded');
  } finally {
    await t.close();
  }
});

/** `pfctl -s states -v -v` as FreeBSD 14 prints it: the inbound states' destination first, translations in parentheses. */
const stateLines = (id: string, line: string, origif?: string) => [
  line,
  '   [1000 + 65535](+100) wscale 7  [2000 + 65535](+200) wscale 7',
  '   age 00:12:01, expires in 23:59:58, 40:38 pkts, 3000:4000 bytes, anchor 0, rule 5',
  `   id: ${id} creatorid: 5f3a9c21`,
  ...(origif ? [`   origif: ${origif}`] : []),
].join('\n');
const STATES = [
  stateLines('00000000000000a1', 'em1 tcp 10.9.0.2:8081 <- 10.0.0.2:40000       ESTABLISHED:ESTABLISHED'),
  stateLines('00000000000000a2', 'em2 tcp 10.9.0.2:8081 <- 10.8.0.2:40001       ESTABLISHED:ESTABLISHED'),
  stateLines('00000000000000a3', 'em2 tcp 10.0.0.2:40000 -> 10.9.0.2:8081       ESTABLISHED:ESTABLISHED'),
  stateLines('00000000000000a4', 'em1 tcp 10.9.0.2:8081 <- 10.0.0.5:40002       ESTABLISHED:ESTABLISHED'),
  stateLines('00000000000000a5', 'all tcp 10.9.0.2:8081 <- 10.0.0.6:40003       ESTABLISHED:ESTABLISHED', 'em1'),
  stateLines('00000000000000a6', 'all tcp 10.9.0.2:8081 <- 10.8.0.7:40004       ESTABLISHED:ESTABLISHED', 'em2'),
  stateLines('00000000000000a7', 'em1 tcp 10.9.0.2:8081 (10.0.0.1:9443) <- 10.0.0.8:40005       ESTABLISHED:ESTABLISHED'),
  'em1 udp 10.9.0.2:8081 <- 10.0.0.9:40006       MULTIPLE:MULTIPLE\n   age 00:00:10, expires in 00:00:50, 2:2 pkts, 100:100 bytes, rule 5\n   id: 00000000000000a8 creatorid: 5f3a9c21',
  stateLines('00000000000000a9', 'em1 tcp 2001:db8:9::2[8081] <- 2001:db8:1::2[40007]       ESTABLISHED:ESTABLISHED'),
  stateLines('00000000000000aa', 'em1 tcp 10.0.0.1:22 <- 10.0.0.2:40008       ESTABLISHED:ESTABLISHED'),
  stateLines('00000000000000ab', 'em1 tcp 10.9.0.1:22 <- 10.0.0.2:40009       ESTABLISHED:ESTABLISHED'),
].join('\n') + '\n';

test('freebsd: a block rule entering its window kills the states it now blocks, by id: its interface, direction and match, after earlier quick rules', async () => {
  const t = await startAreaApp({ platform: createFreebsdPlatform() });
  const headers = t.headers;
  const post = async (url: string, payload: unknown) => json(await t.app.inject({ method: 'POST', url, payload: payload as object, headers }));
  try {
    t.clock.set(new Date(2026, 0, 7, 10, 0).getTime()); // Wednesday 10:00 local
    const evening = await post('/api/v1/schedules', { name: 'evening', time_ranges: '17:15-23:00' });
    await post('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', src_addr: '10.0.0.5', dst_port_start: 8081, priority: 1 });
    await post('/api/v1/rules', { action: 'block', direction: 'in', interface: 'em1', protocol: 'tcp', dst_port_start: 8081, schedule_id: evening.id, priority: 2 });
    await post('/api/v1/rules', { action: 'block', direction: 'in', interface: 'em1', protocol: 'tcp', dst_addr: 'interface address', dst_port_start: 22, schedule_id: evening.id, priority: 3 });
    assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/reload', headers })).statusCode, 200);
    writeFileSync(join(fakeDir, 'states.txt'), STATES);
    clearCalls();
    t.clock.set(new Date(2026, 0, 7, 17, 30).getTime());
    assert.equal(await packetFilterOf(t.app).applySchedules(), true);
    const args = calls().map((c) => c.args);
    const killed = args.filter((a) => a.startsWith('-k id -k ')).map((a) => a.slice('-k id -k '.length).split('/')[0]);
    assert.deepEqual(killed, [
      '00000000000000a1', // in on em1 to port 8081
      '00000000000000a5', // a floating state created on em1
      '00000000000000a7', // the filter saw the translated destination (rdr 10.0.0.1:9443 -> 10.9.0.2:8081)
      '00000000000000a9', // IPv6
      '00000000000000aa', // the firewall's own address on em1, port 22
    ]);
    assert.ok(args.every((a) => !a.startsWith('-k label')), 'no pass rule left its window');
    assert.ok(args.indexOf('-s states -v -v') > args.indexOf('-a bulwark -f -'), 'read after the ruleset with the rule is loaded');
    assert.ok(calls().find((c) => c.args.startsWith('-k id -k '))!.args.endsWith('/5f3a9c21'), 'with the creator id');
  } finally {
    rmSync(join(fakeDir, 'states.txt'), { force: true });
    await t.close();
  }
});

test('pf state listing: direction, translated addresses, ports of both families, floating states and their interface', () => {
  const [inbound, , outbound, , floating, , translated, udp, v6] = parsePfStates(STATES);
  assert.deepEqual(inbound, { id: '00000000000000a1/5f3a9c21', crossing: { direction: 'in', iface: 'em1', protocol: 'tcp', src: '10.0.0.2', sport: 40000, dst: '10.9.0.2', dport: 8081 } });
  assert.deepEqual(outbound.crossing, { direction: 'out', iface: 'em2', protocol: 'tcp', src: '10.0.0.2', sport: 40000, dst: '10.9.0.2', dport: 8081 });
  assert.equal(floating.crossing.iface, 'em1');
  assert.equal(translated.crossing.dst, '10.9.0.2');
  assert.equal(udp.id, '00000000000000a8/5f3a9c21');
  assert.deepEqual([v6.crossing.src, v6.crossing.sport, v6.crossing.dst, v6.crossing.dport], ['2001:db8:1::2', 40007, '2001:db8:9::2', 8081]);
  assert.equal(parsePfStates('all tcp 10.9.0.2:80 <- 10.0.0.2:4000       ESTABLISHED:ESTABLISHED\n   id: 00000000000000b1 creatorid: 00000001\n')[0].crossing.iface, null, 'a floating state without origif: interface unknown');
  assert.deepEqual(parseIfconfigAddresses(readFileSync(join(fakeDir, 'ifconfig.txt'), 'utf8')), new Map([['em1', ['10.0.0.1', 'fe80::1']], ['em2', ['10.9.0.1']], ['lo0', ['127.0.0.1']]]));
});

test('pf counters: the expansions of one rule (same label) are summed', () => {
  const expanded = `block drop in quick proto tcp from any to any port = 53 label "${fixtureId(4)}"
  [ Evaluations: 10 Packets: 3 Bytes: 180 States: 0 ]
block drop in quick proto udp from any to any port = 53 label "${fixtureId(4)}"
  [ Evaluations: 10 Packets: 5 Bytes: 400 States: 0 ]
`;
  assert.deepEqual(parsePfRuleCounters(expanded), [{ name: fixtureId(4), packets: 8, bytes: 580 }]);
});

test('pf counter parsing maps labels (rule ids) to packets and bytes', () => {
  assert.deepEqual(parsePfRuleCounters(PF_VERBOSE).map((c) => c.name), ['bulwark:anti-lockout', fixtureId(1)]);
  assert.deepEqual(parsePfRuleCounters('pass all flags S/SA keep state\n  [ Evaluations: 1 Packets: 2 Bytes: 3 States: 0 ]\n'), []);
});

test('simulated: keeps the applied text and one counter per rule, and refuses another dialect', async () => {
  const filter = new SimulatedPacketFilter();
  const compiled = compileNftables(config({ rules: [rule({ id: fixtureId(1), action: 'block', dport: 81 })] }));
  assert.deepEqual(await filter.apply({ dialect: 'nftables', text: compiled.text }), { ok: true });
  assert.equal(filter.appliedText, compiled.text);
  assert.deepEqual(await filter.counters(), [{ name: `rule_${fixtureId(1)}`, packets: 0, bytes: 0 }]);
  assert.equal((await filter.status()).rules, 1);
  const wrong = await filter.apply({ dialect: 'pf', text: 'pass all' });
  assert.equal(wrong.ok, false);
  assert.equal(filter.appliedText, compiled.text);
});

/** `conntrack -L -o extended` lines: the original tuple, then the reply tuple (after NAT). */
const CONNTRACK_FLOWS = [
  'ipv4     2 tcp      6 431999 ESTABLISHED src=10.0.0.2 dst=10.9.0.2 sport=40000 dport=8081 src=10.9.0.2 dst=10.0.0.2 sport=8081 dport=40000 [ASSURED] mark=0 use=1',
  'ipv4     2 tcp      6 431999 ESTABLISHED src=10.0.0.5 dst=10.9.0.2 sport=40001 dport=8081 src=10.9.0.2 dst=10.0.0.5 sport=8081 dport=40001 [ASSURED] mark=0 use=1',
  'ipv4     2 tcp      6 431999 ESTABLISHED src=10.8.0.2 dst=10.9.0.2 sport=40002 dport=8081 src=10.9.0.2 dst=10.8.0.2 sport=8081 dport=40002 [ASSURED] mark=0 use=1',
  // A port forward: 10.0.0.1:9443 (the firewall) -> 10.9.0.2:8081; the filter saw the translated destination.
  'ipv4     2 tcp      6 431999 ESTABLISHED src=10.0.0.3 dst=10.0.0.1 sport=40003 dport=9443 src=10.9.0.2 dst=10.0.0.3 sport=8081 dport=40003 [ASSURED] mark=0 use=1',
  // The firewall itself connecting out: no inbound crossing.
  'ipv4     2 tcp      6 431999 ESTABLISHED src=10.9.0.1 dst=10.9.0.2 sport=40004 dport=8081 src=10.9.0.2 dst=10.9.0.1 sport=8081 dport=40004 [ASSURED] mark=0 use=1',
  'ipv4     2 udp      17 29 src=10.0.0.77 dst=10.9.0.2 sport=40005 dport=8081 src=10.9.0.2 dst=10.0.0.77 sport=8081 dport=40005 mark=0 use=1',
  'ipv6     10 tcp      6 431999 ESTABLISHED src=2001:db8:1::2 dst=2001:db8:9::2 sport=40006 dport=8081 src=2001:db8:9::2 dst=2001:db8:1::2 sport=8081 dport=40006 [ASSURED] mark=0 use=1',
  'ipv4     2 icmp     1 29 src=10.0.0.2 dst=10.9.0.2 type=8 code=0 id=77 src=10.9.0.2 dst=10.0.0.2 type=0 code=0 id=77 mark=0 use=1',
].join('\n') + '\n';

test('linux: a block rule entering its window deletes the conntrack entries it now blocks, by original tuple: interfaces from the routing table, earlier quick rules kept', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-fake-conntrack-'));
  try {
    writeFileSync(join(dir, 'flows.txt'), CONNTRACK_FLOWS);
    writeFileSync(join(dir, 'conntrack'), `#!/bin/sh\necho "$*" >> "${dir}/conntrack.log"\n[ "$1" = "-L" ] && cat "${dir}/flows.txt"\nexit 0\n`);
    // ip: eth1 faces 10.0.0.0/24 and 2001:db8:1::/64, eth2 10.9.0.0/24 and 2001:db8:9::/64, eth3 10.8.0.0/24.
    writeFileSync(join(dir, 'ip'), `#!/bin/sh
echo "$*" >> "${dir}/ip.log"
if [ "$*" = "-j addr show" ]; then
  echo '[{"ifname":"lo","addr_info":[{"family":"inet","local":"127.0.0.1"}]},{"ifname":"eth1","addr_info":[{"family":"inet","local":"10.0.0.1"}]},{"ifname":"eth2","addr_info":[{"family":"inet","local":"10.9.0.1"}]}]'
  exit 0
fi
case "$4" in
  10.0.0.*|2001:db8:1::*) dev=eth1 ;;
  10.9.0.*|2001:db8:9::*) dev=eth2 ;;
  10.8.0.*) dev=eth3 ;;
  *) echo "RTNETLINK answers: Network is unreachable" >&2; exit 2 ;;
esac
printf '[{"dst":"%s","dev":"%s"}]\\n' "$4" "$dev"
`);
    for (const tool of ['conntrack', 'ip']) chmodSync(join(dir, tool), 0o755);
    const schedules = [schedule('evening', 'evening', '17:15-23:00')];
    const rules = [
      rule({ id: fixtureId(81), action: 'pass', src: '10.0.0.5', dport: 8081 }),
      rule({ id: fixtureId(82), action: 'block', interface: 'eth1', protocol: 'tcp', dport: 8081, schedule_id: 'evening' }),
    ];
    const edge = scheduleEdge(config({ schedules, rules, time: { day: 'wed', minute: 17 * 60 + 30 } }), new Set());
    const driver = new NftablesPacketFilter(async () => { throw new Error('unused'); }, 'nft', join(dir, 'conntrack'), join(dir, 'ip'));
    await driver.killStates(edge);
    const deleted = readFileSync(join(dir, 'conntrack.log'), 'utf8').trim().split('\n').filter((l) => l.startsWith('-D'));
    assert.deepEqual(deleted, [
      '-D -f ipv4 -p tcp -s 10.0.0.2 -d 10.9.0.2 --sport 40000 --dport 8081',
      '-D -f ipv4 -p tcp -s 10.0.0.3 -d 10.0.0.1 --sport 40003 --dport 9443',
      '-D -f ipv6 -p tcp -s 2001:db8:1::2 -d 2001:db8:9::2 --sport 40006 --dport 8081',
    ]);
    const lookups = readFileSync(join(dir, 'ip.log'), 'utf8');
    assert.doesNotMatch(lookups, /10\.0\.0\.77/, 'flows no started rule could match cost no route lookup');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('conntrack tuples: the filter sees the inbound packet after destination NAT and the outbound one after source NAT', () => {
  const [forwarded] = parseTrackedFlows('ipv4 2 tcp 6 300 ESTABLISHED src=198.51.100.7 dst=203.0.113.1 sport=5555 dport=443 src=192.168.1.10 dst=10.0.0.1 sport=8443 dport=61000 [ASSURED] mark=0 use=1\n');
  assert.deepEqual(crossingsOf(forwarded, { local: false, iface: 'wan0' }, { local: false, iface: 'lan0' }), [
    { direction: 'in', iface: 'wan0', protocol: 'tcp', src: '198.51.100.7', sport: 5555, dst: '192.168.1.10', dport: 8443 },
    { direction: 'out', iface: 'lan0', protocol: 'tcp', src: '10.0.0.1', sport: 61000, dst: '192.168.1.10', dport: 8443 },
  ]);
  assert.deepEqual(crossingsOf(forwarded, { local: true, iface: null }, { local: true, iface: null }), [], 'local at both ends: the filter chains never saw it');
});

const namespace = `bwt-drv-${process.pid}`;
const rootSkip = rootSkipReason('the nftables driver test (network namespace)');
const nftIn = (args: string[], input?: string) => runCommand('ip', ['netns', 'exec', namespace, 'nft', ...args], { input });

test('linux: one nft -f per load (no separate check), applies atomically, leaves other tables alone, reads counters, keeps the old table when nft or the kernel refuses', { skip: rootSkip }, async () => {
  const wrapperDir = mkdtempSync(join(tmpdir(), 'bulwark-nft-ns-'));
  // The driver runs `nft`; this wrapper runs the real nft inside the test's namespace instead of the host's.
  writeFileSync(join(wrapperDir, 'nft'), `#!/bin/sh\nexec ip netns exec ${namespace} nft "$@"\n`);
  chmodSync(join(wrapperDir, 'nft'), 0o755);
  await runCommand('ip', ['netns', 'add', namespace]);
  try {
    const other = await nftIn(['-f', '-'], 'table ip other {\n chain c {\n type filter hook input priority 0; policy accept;\n }\n}\n');
    assert.equal(other.code, 0, other.stderr);
    const driver = new NftablesPacketFilter(async () => { throw new Error('unused'); }, join(wrapperDir, 'nft'));
    const first = compileNftables(config({ rules: [rule({ id: fixtureId(1), action: 'block', dport: 81 })] }));
    assert.deepEqual(await driver.apply({ dialect: 'nftables', text: first.text }), { ok: true });
    // Applying again replaces the table (the declare/delete/declare idiom) instead of failing on "exists".
    assert.deepEqual(await driver.apply({ dialect: 'nftables', text: first.text }), { ok: true });
    const tables = (await nftIn(['list', 'tables'])).stdout;
    assert.match(tables, /table ip other/);
    assert.match(tables, /table inet bulwark/);
    // The rule's counter object (its lines count into it by name).
    assert.deepEqual(await driver.counters(), [{ name: `rule_${fixtureId(1)}`, packets: 0, bytes: 0 }]);

    const broken = `${first.text}\nthis is not nftables\n`;
    const checked = await driver.check({ dialect: 'nftables', text: broken });
    assert.equal(!checked.ok && checked.stage, 'check', 'nft -c still serves checks and previews');
    const syntax = await driver.apply({ dialect: 'nftables', text: broken });
    assert.equal(syntax.ok, false);
    assert.equal(!syntax.ok && syntax.stage, 'apply', 'the load itself refuses it');
    assert.match((await nftIn(['list', 'table', 'inet', 'bulwark'])).stdout, new RegExp(`rule ${fixtureId(1)}`), 'and nothing changed');

    // A reject in a postrouting chain passes `nft -c` but the kernel refuses it at commit.
    const refused = compileNftables(config({ rules: [rule({ id: fixtureId(2), action: 'blockreturn', direction: 'out', dport: 82 })] }));
    const outcome = await driver.apply({ dialect: 'nftables', text: refused.text });
    assert.equal(outcome.ok, false);
    assert.equal(!outcome.ok && outcome.stage, 'apply');
    assert.match(!outcome.ok ? outcome.message : '', /Operation not supported/);
    const still = (await nftIn(['list', 'table', 'inet', 'bulwark'])).stdout;
    assert.match(still, new RegExp(`rule ${fixtureId(1)}`), 'the previous table is still loaded');
    assert.doesNotMatch(still, new RegExp(`rule ${fixtureId(2)}`));
  } finally {
    await runCommand('ip', ['netns', 'delete', namespace]);
    rmSync(wrapperDir, { recursive: true, force: true });
  }
});

test('linux status: traffic counters from the counter listing, rule lines from the last read-back; the full load\'s object listing', { skip: rootSkip }, async () => {
  const statusNamespace = `bwt-st-${process.pid}`;
  const wrapperDir = mkdtempSync(join(tmpdir(), 'bulwark-nft-st-'));
  writeFileSync(join(wrapperDir, 'nft'), `#!/bin/sh\nexec ip netns exec ${statusNamespace} nft "$@"\n`);
  chmodSync(join(wrapperDir, 'nft'), 0o755);
  await runCommand('ip', ['netns', 'add', statusNamespace]);
  try {
    const driver = new NftablesPacketFilter(async () => { throw new Error('unused'); }, join(wrapperDir, 'nft'));
    const before = await nftablesStatus(driver, join(wrapperDir, 'no-conntrack-count'));
    assert.equal(before.running, false, 'no table yet');
    assert.deepEqual(await driver.tableObjects(), [], 'no table: nothing to keep or delete');
    const compiled = compileNftables(config({ rules: [rule({ id: fixtureId(5), action: 'block', dport: 81 })] }));
    assert.deepEqual(await driver.apply({ dialect: 'nftables', text: compiled.text }), { ok: true });
    const objects = (await driver.tableObjects())!.map((o) => `${o.kind} ${o.name}`);
    assert.ok(objects.includes(`counter rule_${fixtureId(5)}`) && objects.includes('chain filter_in'), objects.join(', '));
    assert.equal((await nftablesStatus(driver, join(wrapperDir, 'no-conntrack-count'))).rules, 0, 'no read-back yet: no rule lines known');
    assert.ok((await driver.readBack()).ok);
    const lines = compiled.nft!.chains.reduce((sum, chain) => sum + chain.rules.length, 0);
    const status = await nftablesStatus(driver, join(wrapperDir, 'no-conntrack-count'));
    assert.deepEqual({ running: status.running, rules: status.rules, packets_in: status.packets_in }, { running: true, rules: lines, packets_in: 0 });
  } finally {
    await runCommand('ip', ['netns', 'delete', statusNamespace]);
    rmSync(wrapperDir, { recursive: true, force: true });
  }
});
