/**
 * The boot step (install/bulwark-boot.sh) and what it loads: the ruleset Bulwark keeps after every successful load
 * and the fallback rendered beside it (compile/boot-fallback.ts; golden files), the built-in fallback the script
 * carries, the record it leaves and GET /status `boot`. Linux through the real nft in throwaway network namespaces
 * (root); FreeBSD through a fake pfctl on PATH, as the other freebsd suites do.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderNftFallback, renderPfFallback } from '../src/compile/boot-fallback.js';
import { createFreebsdPlatform } from '../src/platform/freebsd/index.js';
import { json } from './helpers/app.js';
import { startAreaApp } from './helpers/area-app.js';
import { packetFilterOf } from './helpers/areas.js';
import { inNamespace, NetnsLab, ROOT } from './helpers/netns-lab.js';
import { rootSkipReason } from './helpers/shared.js';

const BOOT_SCRIPT = join(ROOT, 'install/bulwark-boot.sh');
const GOLDEN = join(ROOT, 'test/golden');
const update = process.env.UPDATE_GOLDEN === '1';
const rootSkip = rootSkipReason('the boot step with the real nft (a throwaway network namespace)');
const work = mkdtempSync(join(tmpdir(), 'bulwark-boot-step-'));
after(() => rmSync(work, { recursive: true, force: true }));

/** A data directory with an environment file pointing at it, as /etc/bulwark/bulwark.env does on an appliance. */
function appliance(name: string, platform: 'linux' | 'freebsd', listen = '0.0.0.0:8080', tlsListen?: string) {
  const dataDir = join(work, name, 'data');
  mkdirSync(join(dataDir, 'boot'), { recursive: true });
  const envFile = join(work, name, 'bulwark.env');
  const tls = tlsListen === undefined ? '' : `BULWARK_TLS_LISTEN=${tlsListen}\n`;
  writeFileSync(envFile, `# as installed\nBULWARK_DATA_DIR="${dataDir}"\nBULWARK_PLATFORM=${platform}\nBULWARK_LISTEN=${listen}\n${tls}`);
  return { dataDir, envFile, lastBoot: () => JSON.parse(readFileSync(join(dataDir, 'boot/last-boot.json'), 'utf8')) };
}

function golden(name: string, text: string): void {
  const file = join(GOLDEN, name);
  if (update) writeFileSync(file, text);
  assert.ok(existsSync(file), `${file} is missing: run with UPDATE_GOLDEN=1 and review it`);
  assert.equal(text, readFileSync(file, 'utf8'), `${name} differs from its golden file`);
}

/** Runs `script` in a fresh network namespace (nothing loaded yet): the boot script, then what it lists. */
function inFreshNamespace(script: string): { code: number | null; out: string; err: string } {
  const result = spawnSync('unshare', ['-n', 'sh', '-c', script], { encoding: 'utf8', timeout: 30_000 });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

test('the fallback renders management from the LAN interfaces (golden files); the kernel takes the nftables one', () => {
  const input = { apiPorts: [8080, 8443], lanInterfaces: ['eth1', 'lan0', 'bad name"'] };
  const nft = renderNftFallback(input);
  golden('boot-fallback-lan.nft', nft);
  golden('boot-fallback-lan.pf', renderPfFallback(input));
  golden('boot-fallback-private.pf', renderPfFallback({ apiPorts: [8080], lanInterfaces: [] }));
  assert.match(nft, /iifname \{ "eth1", "lan0" \} fib daddr type local tcp dport \{ 22, 8080, 8443 \} accept/, 'both API listeners and SSH from the LAN');
  assert.doesNotMatch(nft, /bad name/, 'an interface name that is not a bare word is left out, never quoted in');
  if (rootSkip) return;
  const loaded = spawnSync('unshare', ['-n', 'nft', '-f', '-'], { input: nft, encoding: 'utf8' });
  assert.equal(loaded.status, 0, loaded.stderr);
});

test('the boot script\'s built-in fallback is the rendered one with no LAN interface known, on every API listener (nftables and pf)', () => {
  // [plain listener port, BULWARK_TLS_LISTEN (undefined: not in the file), the API ports the fallback opens]
  const listeners: [number, string | undefined, number[]][] = [
    [8080, undefined, [8080]], [443, undefined, [443]], [22, undefined, [22]], [21, undefined, [21]],
    [8080, '0.0.0.0:8443', [8080, 8443]], [8080, '[::]:443', [8080, 443]], [8443, '0.0.0.0:20', [8443, 20]],
    [8080, '0.0.0.0:8080', [8080]], [8080, 'off', [8080]], [8080, '', [8080]],
  ];
  for (const [platform, render] of [['linux', renderNftFallback], ['freebsd', renderPfFallback]] as const) {
    for (const [port, tls, apiPorts] of listeners) {
      const { envFile } = appliance(`builtin-${platform}-${port}-${tls ?? 'none'}`, platform, `[::]:${port}`, tls);
      const printed = spawnSync('sh', [BOOT_SCRIPT, '--print-builtin-fallback', envFile], { encoding: 'utf8' });
      assert.equal(printed.status, 0, printed.stderr);
      assert.equal(printed.stdout, render({ apiPorts, lanInterfaces: [] }), `${platform}, API port ${port}, HTTPS ${tls ?? 'not set'}`);
    }
  }
});

test('linux: through the built-in fallback a LAN client reaches the API on its plain and HTTPS ports and SSH, and no other port', { skip: rootSkip, timeout: 120_000 }, async () => {
  const lab = new NetnsLab('b36f');
  try {
    const fw = lab.namespace('fw');
    const client = lab.namespace('cl');
    lab.link({ ns: fw, name: `f${lab.tag}`, address: '10.236.0.1/24' }, { ns: client, name: `c${lab.tag}`, address: '10.236.0.2/24' });
    const box = appliance('linux-listeners', 'linux', '0.0.0.0:8080', '0.0.0.0:8443');
    const boot = spawnSync('ip', ['netns', 'exec', fw, 'sh', BOOT_SCRIPT, box.envFile], { encoding: 'utf8' });
    assert.equal(boot.status, 0, boot.stderr);
    assert.deepEqual([box.lastBoot().loaded, box.lastBoot().file], ['fallback', 'builtin']);
    // Something listening on every port the client tries, so a closed port is the fallback's doing.
    const ports = [22, 8080, 8443, 9000, 443];
    lab.spawnIn(fw, process.execPath, ['-e', `for (const p of ${JSON.stringify(ports)}) require('net').createServer((s) => { s.on('error', () => undefined); s.end('hi'); }).listen(p, '10.236.0.1')`]);
    const reach = (port: number) => inNamespace(client, process.execPath, ['-e', `const s = require('net').connect(${port}, '10.236.0.1'); s.setTimeout(1500, () => { console.log('timeout'); process.exit(0); }); s.on('connect', () => { console.log('open'); process.exit(0); }); s.on('error', (e) => { console.log(e.code); process.exit(0); })`], { timeoutMs: 10_000 }).trim();
    const deadline = Date.now() + 20_000;
    while (reach(22) !== 'open' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(Object.fromEntries(ports.map((port) => [port, reach(port)])), { 22: 'open', 8080: 'open', 8443: 'open', 9000: 'timeout', 443: 'timeout' });
  } finally {
    await lab.cleanup();
  }
});

test('linux: the kept ruleset is loaded before anything else; a refused one falls back to the rendered fallback and says why', { skip: rootSkip }, () => {
  const box = appliance('linux-kept', 'linux');
  const kept = 'table inet bulwark\ndelete table inet bulwark\ntable inet bulwark {\n\tchain filter_in {\n\t\ttype filter hook prerouting priority dstnat + 10; policy accept;\n\t\ttcp dport 8081 drop comment "kept"\n\t}\n}\n';
  writeFileSync(join(box.dataDir, 'boot/ruleset.nft'), kept);
  writeFileSync(join(box.dataDir, 'boot/fallback.nft'), renderNftFallback({ apiPorts: [8080], lanInterfaces: ['lan0'] }));
  const applied = inFreshNamespace(`sh ${BOOT_SCRIPT} ${box.envFile} && nft list table inet bulwark`);
  assert.equal(applied.code, 0, applied.err);
  assert.match(applied.out, /tcp dport 8081 drop comment "kept"/);
  assert.deepEqual([box.lastBoot().loaded, box.lastBoot().reason], ['applied', 'applied']);

  // Line 6 refused: nothing of it is loaded, the rendered fallback is.
  writeFileSync(join(box.dataDir, 'boot/ruleset.nft'), kept.replace('tcp dport 8081 drop', 'tcp dport 8081 dorp'));
  const refused = inFreshNamespace(`sh ${BOOT_SCRIPT} ${box.envFile} && nft list table inet bulwark`);
  assert.equal(refused.code, 0, refused.err);
  assert.match(refused.out, /policy drop;/);
  assert.match(refused.out, /iifname "lan0" fib daddr type local tcp dport \{ 22, 8080 \} accept/);
  assert.doesNotMatch(refused.out, /8081/);
  const record = box.lastBoot();
  assert.equal(record.loaded, 'fallback');
  assert.equal(record.reason, 'refused');
  assert.equal(record.file, join(box.dataDir, 'boot/fallback.nft'));
  assert.equal(record.ruleset_error_line, 6);
  assert.match(record.ruleset_error, /Error/);
});

test('linux: with no kept ruleset and no rendered fallback (a fresh install) the built-in fallback is loaded', { skip: rootSkip }, () => {
  const box = appliance('linux-fresh', 'linux', '0.0.0.0:9443');
  const fresh = inFreshNamespace(`sh ${BOOT_SCRIPT} ${box.envFile} && nft list table inet bulwark`);
  assert.equal(fresh.code, 0, fresh.err);
  assert.match(fresh.out, /policy drop;/);
  assert.match(fresh.out, /ip saddr \{ 10\.0\.0\.0\/8, 172\.16\.0\.0\/12, 192\.168\.0\.0\/16 \} fib daddr type local tcp dport \{ 22, 9443 \} accept/);
  assert.deepEqual([box.lastBoot().loaded, box.lastBoot().file, box.lastBoot().reason], ['fallback', 'builtin', 'missing']);
});

// FreeBSD: a fake pfctl that records its calls, refuses a file containing "refuse-me", and answers the host checks.
const fakeDir = mkdtempSync(join(tmpdir(), 'bulwark-boot-pfctl-'));
after(() => rmSync(fakeDir, { recursive: true, force: true }));
writeFileSync(join(fakeDir, 'pfctl'), `#!/bin/sh
dir="${fakeDir}"
n=$(ls "$dir"/call-* 2>/dev/null | wc -l)
echo "$*" > "$dir/call-$n.args"
last=$(eval echo \\$$#)
if [ "$last" = "-" ]; then cat > "$dir/call-$n.input"; elif [ -f "$last" ]; then cp "$last" "$dir/call-$n.input"; fi
if [ -e "$dir/refuse-all" ] && [ -n "$last" ] && [ "$last" != info ] && [ "$last" != nat ] && [ "$last" != rules ]; then echo "$last:1: syntax error" >&2; exit 1; fi
if grep -q refuse-me "$dir/call-$n.input" 2>/dev/null; then echo "$last:3: syntax error" >&2; exit 1; fi
case "$*" in
  "-s info") printf 'Status: Enabled for 0 days 01:02:03\\n' ;;
  "-s nat") printf 'nat-anchor "bulwark" all\\nrdr-anchor "bulwark" all\\nbinat-anchor "bulwark" all\\n' ;;
  "-s rules") printf 'anchor "bulwark" all\\n' ;;
esac
exit 0
`);
chmodSync(join(fakeDir, 'pfctl'), 0o755);
writeFileSync(join(fakeDir, 'sysctl'), '#!/bin/sh\necho 65535\n');
chmodSync(join(fakeDir, 'sysctl'), 0o755);
writeFileSync(join(fakeDir, 'ifconfig'), `#!/bin/sh\ncat <<'EOF'\n${[
  'em1: flags=8843<UP,BROADCAST,RUNNING,SIMPLEX,MULTICAST> metric 0 mtu 1500',
  '\tether 58:9c:fc:00:00:01',
  '\tinet 10.0.0.1 netmask 0xffffff00 broadcast 10.0.0.255',
  'lo0: flags=8049<UP,LOOPBACK,RUNNING,MULTICAST> metric 0 mtu 16384',
  '\tinet 127.0.0.1 netmask 0xff000000',
].join('\n')}\nEOF\n`);
chmodSync(join(fakeDir, 'ifconfig'), 0o755);
process.env.PATH = `${fakeDir}:${process.env.PATH}`;
const pfctlCalls = () => readdirSync(fakeDir).filter((f) => f.endsWith('.args')).sort((a, b) => parseInt(a.slice(5), 10) - parseInt(b.slice(5), 10))
  .map((f) => ({ args: readFileSync(join(fakeDir, f), 'utf8').trim(), input: existsSync(join(fakeDir, f.replace('.args', '.input'))) ? readFileSync(join(fakeDir, f.replace('.args', '.input')), 'utf8') : undefined }));
const clearPfctlCalls = () => { for (const f of readdirSync(fakeDir)) if (f.startsWith('call-')) rmSync(join(fakeDir, f)); };

test('freebsd: every successful reload keeps the loaded anchor and the fallback for the LAN in <data-dir>/boot; a refused one keeps the previous', async () => {
  const t = await startAreaApp({ platform: createFreebsdPlatform() });
  try {
    const headers = t.headers;
    assert.equal((await t.app.inject({ method: 'PUT', url: '/api/v1/interfaces/em1/role', payload: { role: 'lan' }, headers })).statusCode, 200);
    await t.app.inject({ method: 'POST', url: '/api/v1/rules', payload: { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: 8081 }, headers });
    clearPfctlCalls();
    const reload = await t.app.inject({ method: 'POST', url: '/api/v1/reload', headers });
    assert.equal(reload.statusCode, 200, reload.body);
    const [load] = pfctlCalls().filter((c) => c.args === '-a bulwark -f -');
    const keptFile = join(t.dataDir, 'boot/ruleset.pf');
    const kept = () => (existsSync(keptFile) ? readFileSync(keptFile, 'utf8') : undefined);
    // Written after the answer (off the client's path), by one writer: waited for through the service.
    const written = async () => {
      await packetFilterOf(t.app).checkDrift(); // serialised after the loads' follow-ups, which hand the text over
      await packetFilterOf(t.app).bootRulesetSettled();
    };
    await written();
    assert.equal(kept(), load.input, 'the file is the text pfctl loaded');
    const fallback = readFileSync(join(t.dataDir, 'boot/fallback.pf'), 'utf8');
    assert.equal(fallback, renderPfFallback({ apiPorts: [t.app.context.config.port], lanInterfaces: ['em1'] }));
    assert.match(fallback, /pass in quick on em1 proto tcp from any to \(self\) port \{ 22 8080 \}/);

    const rules = json(await t.app.inject({ url: '/api/v1/rules', headers }));
    await t.app.inject({ method: 'PUT', url: `/api/v1/rules/${rules[0].id}`, payload: { description: 'refuse-me' }, headers });
    const refused = await t.app.inject({ method: 'POST', url: '/api/v1/reload', headers });
    assert.equal(refused.statusCode, 409, refused.body);
    await written();
    assert.equal(kept(), load.input, 'a refused load leaves the kept file as it was');
    assert.doesNotMatch(kept() ?? '', /refuse-me/);

    // Loads in quick succession: the file ends as the last text loaded, never an earlier one.
    clearPfctlCalls();
    const reloads = [];
    for (const port of [9001, 9002, 9003, 9004, 9005]) {
      await t.app.inject({ method: 'PUT', url: `/api/v1/rules/${rules[0].id}`, payload: { description: `burst ${port}`, dst_port_start: port }, headers });
      reloads.push(t.app.inject({ method: 'POST', url: '/api/v1/reload', headers }));
    }
    assert.deepEqual((await Promise.all(reloads)).map((r) => r.statusCode), [200, 200, 200, 200, 200]);
    await written();
    const burst = pfctlCalls().filter((c) => c.args === '-a bulwark -f -');
    assert.ok(burst.length >= 1);
    assert.equal(kept(), burst.at(-1)!.input);
    assert.match(kept() ?? '', /port 9005/);
  } finally {
    await t.close();
  }
});

test('freebsd: the boot script loads the kept anchor with pfctl -a bulwark -f FILE; a refused one falls back; /status shows what it did', async () => {
  const box = appliance('freebsd', 'freebsd');
  const keptFile = join(box.dataDir, 'boot/ruleset.pf');
  writeFileSync(keptFile, 'pass in quick proto tcp to port 8081\n');
  clearPfctlCalls();
  const run = () => spawnSync('sh', [BOOT_SCRIPT, box.envFile], { encoding: 'utf8' });
  assert.equal(run().status, 0);
  assert.deepEqual(pfctlCalls().map((c) => c.args), [`-a bulwark -f ${keptFile}`]);
  assert.equal(box.lastBoot().loaded, 'applied');

  writeFileSync(keptFile, 'pass in quick proto tcp to port 8081\n\nrefuse-me\n');
  clearPfctlCalls();
  assert.equal(run().status, 0);
  assert.deepEqual(pfctlCalls().map((c) => c.args), [`-a bulwark -f ${keptFile}`, `-a bulwark -f ${pfctlCalls()[1].args.split(' -f ')[1]}`]);
  assert.equal(pfctlCalls()[1].input, renderPfFallback({ apiPorts: [8080], lanInterfaces: [] }), 'no rendered fallback: the built-in one');
  assert.deepEqual([box.lastBoot().loaded, box.lastBoot().reason, box.lastBoot().ruleset_error_line], ['fallback', 'refused', 3]);

  const t = await startAreaApp({ dataDir: box.dataDir });
  try {
    const headers = t.headers;
    const status = json(await t.app.inject({ url: '/api/v1/status', headers }));
    assert.equal(status.boot.loaded, 'fallback');
    assert.equal(status.boot.refused_line, 3);
    assert.match(status.boot.reason, /refused the last applied ruleset at line 3; the safe fallback was loaded \(the built-in one/);
    assert.doesNotMatch(JSON.stringify(status.boot), /syntax error/, 'the tool\'s message stays in the file');

    // Everything refused: nothing loaded, exit 1, and /status says so.
    writeFileSync(join(fakeDir, 'refuse-all'), '');
    const nothing = run();
    rmSync(join(fakeDir, 'refuse-all'));
    assert.equal(nothing.status, 1);
    assert.equal(box.lastBoot().loaded, 'none');
    const after = json(await t.app.inject({ url: '/api/v1/status', headers }));
    assert.equal(after.boot.loaded, 'none');
    assert.match(after.boot.reason, /the fallback was refused too: nothing was loaded at boot/);
  } finally {
    await t.close();
  }
});

test('/status boot says "none" while the boot step has not run for the data directory; the simulated platform keeps no ruleset', async () => {
  const t = await startAreaApp();
  try {
    const headers = t.headers;
    const status = json(await t.app.inject({ url: '/api/v1/status', headers }));
    assert.deepEqual(status.boot, { loaded: 'none', at: null, reason: 'the boot step has not run for this data directory' });
    assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/reload', headers })).statusCode, 200);
    assert.equal(existsSync(join(t.dataDir, 'boot')), false, 'nothing was loaded into a kernel: nothing for a boot to restore');
  } finally {
    await t.close();
  }
});

test('freebsd: the rc.d hook runs after pf and before the network, and starts the boot script with the environment file', () => {
  const hook = readFileSync(join(ROOT, 'install/freebsd/bulwark_boot'), 'utf8');
  assert.match(hook, /^# PROVIDE: bulwark_boot$/m);
  assert.match(hook, /^# REQUIRE: pf$/m);
  assert.match(hook, /^# BEFORE: NETWORKING$/m);
  // rc.subr's part played by a stand-in: run_rc_command start calls the start command, as rc.subr does.
  const rcSubr = join(work, 'rc.subr');
  writeFileSync(rcSubr, 'load_rc_config() { :; }\nrun_rc_command() { [ "$1" = start ] && eval "$start_cmd"; }\n');
  const hookFile = join(work, 'bulwark_boot');
  writeFileSync(hookFile, hook.replace('. /etc/rc.subr', `. ${rcSubr}`));
  const box = appliance('freebsd-rc', 'freebsd');
  writeFileSync(join(box.dataDir, 'boot/ruleset.pf'), 'pass in quick proto tcp to port 8081\n');
  clearPfctlCalls();
  const started = spawnSync('sh', [hookFile, 'start'], { encoding: 'utf8', env: { ...process.env, bulwark_boot_script: BOOT_SCRIPT, bulwark_boot_env: box.envFile } });
  assert.equal(started.status, 0, started.stderr);
  assert.deepEqual(pfctlCalls().map((c) => c.args), [`-a bulwark -f ${join(box.dataDir, 'boot/ruleset.pf')}`]);
  assert.equal(box.lastBoot().loaded, 'applied');
});
