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
import { NftablesPacketFilter } from '../src/platform/linux/packet-filter.js';
import { SimulatedPacketFilter } from '../src/platform/simulated/packet-filter.js';
import { runCommand } from '../src/platform/exec.js';
import { compileNftables } from '../src/compile/nftables.js';
import { startTestApp, json } from './helpers/app.js';
import { adminHeaders } from './helpers/auth.js';
import { rootSkipReason } from './helpers/shared.js';
import { config, fixtureId, rule } from './helpers/firewall-fixtures.js';
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
if [ -e "$dir/refuse" ] && [ "$1" = "-n" ]; then
  echo "stdin:14: syntax error" >&2
  exit 1
fi
case "$*" in
  "-s info") cat "$dir/info.txt" ;;
  "-s nat") cat "$dir/main-nat.txt" ;;
  "-s rules") cat "$dir/main-rules.txt" ;;
  "-a bulwark -s rules") printf 'pass in quick proto tcp all\\nblock in quick all\\n' ;;
  "-a bulwark -v -s rules") cat "$dir/rules-v.txt" ;;
  "-a bulwark -s Tables") cat "$dir/tables.txt" 2>/dev/null ;;
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
process.env.PATH = `${fakeDir}:${process.env.PATH}`;
after(() => rmSync(fakeDir, { recursive: true, force: true }));

const calls = () =>
  readdirSync(fakeDir).filter((f) => f.endsWith('.args')).sort((a, b) => Number(a.split('-')[1].split('.')[0]) - Number(b.split('-')[1].split('.')[0]))
    .map((f) => ({ args: readFileSync(join(fakeDir, f), 'utf8').trim(), input: existsSync(join(fakeDir, f.replace('.args', '.input'))) ? readFileSync(join(fakeDir, f.replace('.args', '.input')), 'utf8') : undefined }));
const clearCalls = () => { for (const f of readdirSync(fakeDir)) if (f.startsWith('call-')) rmSync(join(fakeDir, f)); };

test('freebsd: reload checks with pfctl -n, then loads the anchor with pfctl -a bulwark -f -; a refusal keeps the old ruleset', async () => {
  const t = await startTestApp({ platform: createFreebsdPlatform() });
  const headers = await adminHeaders(t.app);
  try {
    const created = json(await t.app.inject({ method: 'POST', url: '/api/v1/rules', payload: { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: 8081 }, headers }));
    clearCalls();
    const reload = await t.app.inject({ method: 'POST', url: '/api/v1/reload', headers });
    assert.equal(reload.statusCode, 200, reload.body);
    assert.equal(json(reload).dialect, 'pf');
    const loads = () => calls().filter((c) => c.args.endsWith('-f -'));
    const [check, load] = loads();
    assert.equal(check.args, '-n -a bulwark -f -');
    assert.equal(load.args, '-a bulwark -f -');
    assert.equal(check.input, load.input);
    assert.match(load.input!, new RegExp(`block in log quick proto tcp to any port 8081 label "${created.id}"`));
    assert.match(load.input!, /pass in quick inet proto tcp from any to \(self\) port \d+ keep state label "bulwark:anti-lockout"/);

    // pfctl refuses: 409 with its message, nothing loaded, the change stays pending.
    await t.app.inject({ method: 'PUT', url: `/api/v1/rules/${created.id}`, payload: { dst_port_start: 8082 }, headers });
    writeFileSync(join(fakeDir, 'refuse'), '');
    clearCalls();
    const refused = await t.app.inject({ method: 'POST', url: '/api/v1/reload', headers });
    rmSync(join(fakeDir, 'refuse'));
    assert.equal(refused.statusCode, 409);
    assert.match(json(refused).error, /pf refused the ruleset; the previous ruleset stays in force: pfctl refused line 14 \(pass\): syntax error/);
    assert.deepEqual(loads().map((c) => c.args), ['-n -a bulwark -f -'], 'nothing is loaded after a failed check');
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

test('freebsd: pf disabled or a pf.conf hook missing (binat-anchor included, filter hook last) → /status reports it, reload is 409 naming the line', async () => {
  const t = await startTestApp({ platform: createFreebsdPlatform() });
  const headers = await adminHeaders(t.app);
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
  const fresh = await startTestApp({ platform: createFreebsdPlatform() });
  try {
    const status = json(await fresh.app.inject({ url: '/api/v1/status', headers: await adminHeaders(fresh.app) }));
    assert.deepEqual(status.pf_problems, ['pf is disabled: set pf_enable="YES" in /etc/rc.conf and run "service pf start" (or "pfctl -e")']);
  } finally {
    setUpHost();
    await fresh.close();
  }
});

test('freebsd: a table over net.pf.request_maxcount is refused at check time; a deleted alias\'s table is removed after reload', async () => {
  const t = await startTestApp({ platform: createFreebsdPlatform() });
  const headers = await adminHeaders(t.app);
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
  const t = await startTestApp({ platform: createFreebsdPlatform() });
  const headers = await adminHeaders(t.app);
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

const namespace = `bwt-drv-${process.pid}`;
const rootSkip = rootSkipReason('the nftables driver test (network namespace)');
const nftIn = (args: string[], input?: string) => runCommand('ip', ['netns', 'exec', namespace, 'nft', ...args], { input });

test('linux: validates, applies atomically, leaves other tables alone, reads counters, keeps the old table when the kernel refuses', { skip: rootSkip }, async () => {
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
    assert.deepEqual(await driver.counters(), [{ name: `rule_${fixtureId(1)}`, packets: 0, bytes: 0 }]);

    const syntax = await driver.apply({ dialect: 'nftables', text: `${first.text}\nthis is not nftables\n` });
    assert.equal(syntax.ok, false);
    assert.equal(!syntax.ok && syntax.stage, 'check');

    // A reject in a postrouting chain passes `nft -c` but the kernel refuses it at commit.
    const refused = compileNftables(config({ rules: [rule({ id: fixtureId(2), action: 'blockreturn', direction: 'out', dport: 82 })] }));
    const outcome = await driver.apply({ dialect: 'nftables', text: refused.text });
    assert.equal(outcome.ok, false);
    assert.equal(!outcome.ok && outcome.stage, 'apply');
    assert.match(!outcome.ok ? outcome.message : '', /Operation not supported/);
    const still = (await nftIn(['list', 'table', 'inet', 'bulwark'])).stdout;
    assert.match(still, new RegExp(`rule_${fixtureId(1)}`), 'the previous table is still loaded');
    assert.doesNotMatch(still, new RegExp(`rule_${fixtureId(2)}`));
  } finally {
    await runCommand('ip', ['netns', 'delete', namespace]);
    rmSync(wrapperDir, { recursive: true, force: true });
  }
});
