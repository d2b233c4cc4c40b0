/**
 * Linux platform, as root: Unbound, chronyd and Kea run as their own users (unbound, _chrony, _kea) from a
 * runtime directory outside the private data directory, and still do their work. A refused apply with the real
 * unbound-checkconf answers 409 with the rendered line and keyword only. Only loopback is used.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { json } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';
import { findProgram } from '../../src/platform/daemon-tools.js';
import { runtimeRoot, systemAccount } from '../../src/platform/daemon-runtime.js';
import type { AppContext } from '../../src/context.js';
import type { DaemonName } from '../../src/platform/daemons.js';
import { systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const skipReason = (programs: string[], user: string) =>
  systemSkip('running daemons as their own users', { root: true, programs: [...programs, 'setpriv'], users: [user] });


/**
 * A data directory inside a private (0700) folder, as `--data-dir /root/bulwark/data` or a `mktemp -d` folder
 * gives: no daemon user can traverse it, so the daemons' files must live elsewhere (the runtime tree).
 */
function privateDataDir(): { parent: string; dataDir: string } {
  const parent = mkdtempSync(join(tmpdir(), 'bulwark-private-'));
  assert.equal(mode(parent), 0o700, 'mkdtemp makes a private folder');
  const dataDir = join(parent, 'data');
  mkdirSync(dataDir, { mode: 0o700 });
  return { parent, dataDir };
}

async function linuxApp(): Promise<AreaApp & { runtimeRoot: string }> {
  const { parent, dataDir } = privateDataDir();
  const t = await startAreaApp({ config: { platform: 'linux' }, dataDir });
  return {
    ...t,
    runtimeRoot: runtimeRoot({ dataDir }),
    close: async () => {
      await t.close();
      rmSync(parent, { recursive: true, force: true });
      rmSync(runtimeRoot({ dataDir }), { recursive: true, force: true });
    },
  };
}

/** The real uid of a running daemon, from /proc (the pid comes from the platform's supervisor). */
async function daemonUid(app: FastifyInstance, name: DaemonName): Promise<{ pid: number; uid: number }> {
  const status = await (app as unknown as { context: AppContext }).context.platform.daemons.status(name);
  assert.ok(status.running && status.pid, `${name} runs: ${JSON.stringify(status)}`);
  const uidLine = readFileSync(`/proc/${status.pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('Uid:'))!;
  return { pid: status.pid!, uid: Number(uidLine.split(/\s+/)[1]) };
}

function dig(port: number, name: string, type: string): string {
  const result = spawnSync('dig', ['+short', '+time=2', '+tries=3', `@127.0.0.1`, '-p', String(port), name, type], { encoding: 'utf8' });
  return result.stdout.trim();
}

const mode = (path: string) => statSync(path).mode & 0o777;

test('Unbound runs as user unbound from its runtime dir and answers a host override and a quoted TXT record', { skip: skipReason(['unbound', 'unbound-checkconf', 'dig'], 'unbound'), timeout: 60_000 }, async () => {
  const t = await linuxApp();
  try {
    const port = await freePort();
    const config = await t.request('PUT', '/api/v1/dns/resolver/config', { enabled: true, listen_interfaces: ['127.0.0.1'], port, forwarding_enabled: false, dnssec: false, rebind_protection: false });
    assert.equal(config.statusCode, 200, config.body);
    assert.equal((await t.request('POST', '/api/v1/dns/resolver/hosts', { hostname: 'nas', domain: 'home.lan', value: '192.168.1.10' })).statusCode, 201);
    const txt = `it's "quoted"; include: "/etc/passwd" \\ end`;
    assert.equal((await t.request('POST', '/api/v1/dns/resolver/hosts', { hostname: 'note', domain: 'home.lan', record_type: 'TXT', value: txt })).statusCode, 201);
    const applied = await t.request('POST', '/api/v1/dns/resolver/apply');
    assert.equal(applied.statusCode, 200, applied.body);
    assert.equal(json(applied).running, true, applied.body);
    assert.equal(json(applied).config_file, join(t.runtimeRoot, 'unbound', 'unbound.conf'));

    const { uid } = await daemonUid(t.app, 'unbound');
    assert.equal(uid, systemAccount('unbound')!.uid, 'Unbound runs as user unbound');
    let answer = '';
    for (let attempt = 0; attempt < 20 && !answer; attempt++) {
      answer = dig(port, 'nas.home.lan', 'A');
      if (!answer) await new Promise((resolve) => setTimeout(resolve, 150));
    }
    assert.equal(answer, '192.168.1.10');
    assert.equal(dig(port, 'note.home.lan', 'TXT'), '"it\'s \\"quoted\\"; include: \\"/etc/passwd\\" \\\\ end"');

    // Runtime layout: root:unbound 0750 for what Unbound reads, unbound-owned state for what it writes.
    const dir = join(t.runtimeRoot, 'unbound');
    const unbound = systemAccount('unbound')!;
    assert.equal(mode(t.runtimeRoot), 0o755);
    assert.equal(mode(dir), 0o750);
    assert.equal(statSync(dir).gid, unbound.gid);
    assert.equal(mode(join(dir, 'unbound.conf')), 0o640);
    assert.equal(statSync(join(dir, 'state')).uid, unbound.uid);
    assert.ok(statSync(join(dir, 'state', 'unbound.ctl')).isSocket());
    const stats = json(await t.request('GET', '/api/v1/dns/stats'));
    assert.ok(stats.queries_total >= 2, 'unbound-control reaches the control socket in the state dir');
  } finally {
    await t.close();
  }
});

test('the real unbound-checkconf: a refused apply answers 409 with the rendered line and keyword, nothing from another file', { skip: skipReason(['unbound-checkconf'], 'unbound'), timeout: 60_000 }, async () => {
  const t = await linuxApp();
  try {
    const secret = 'SECRET-LINE-3b1e0d';
    const secretFile = join(t.dataDir, 'secret.key');
    writeFileSync(secretFile, `${secret}\n`, { mode: 0o600 });
    const port = await freePort();
    await t.request('PUT', '/api/v1/dns/resolver/config', { enabled: true, listen_interfaces: ['127.0.0.1'], port, forwarding_enabled: false, dnssec: false, custom_options: 'msg-cache-slabs: 3' });
    const applied = await t.request('POST', '/api/v1/dns/resolver/apply');
    assert.equal(applied.statusCode, 409, applied.body);
    assert.match(json(applied).error, /^the rendered Unbound configuration was refused by unbound-checkconf at line \d+ \(msg-cache-slabs\) of the rendered file/);
    assert.doesNotMatch(applied.body, /power of 2|error:/);
    // The same value stored without validation (an old version restored): the renderer refuses the include.
    const store = (t.app as unknown as { context: AppContext }).context.store;
    store.putSingleton('dns_resolver', { ...store.getSingleton('dns_resolver'), custom_options: `edns-buffer-size: 1232 include: "${secretFile}"` });
    const restored = await t.request('POST', '/api/v1/dns/resolver/apply');
    assert.equal(restored.statusCode, 409);
    assert.doesNotMatch(restored.body, new RegExp(secret));
    const check = await t.request('GET', '/api/v1/config/check');
    assert.doesNotMatch(check.body, new RegExp(secret));
  } finally {
    await t.close();
  }
});

test('chronyd drops to user _chrony and serves its command socket from the runtime state dir', { skip: skipReason(['chronyd', 'chronyc'], '_chrony'), timeout: 60_000 }, async () => {
  const t = await linuxApp();
  try {
    // No sources and manual mode: chronyd never touches this machine's clock.
    for (const source of json(await t.request('GET', '/api/v1/time/sources'))) await t.request('DELETE', `/api/v1/time/sources/${source.id}`);
    const port = await freePort();
    const config = await t.request('PUT', '/api/v1/time/config', { enabled: true, clock_discipline: false, ntp_enabled: true, ntp_listen: `127.0.0.1:${port}` });
    assert.equal(config.statusCode, 200, config.body);
    const applied = await t.request('POST', '/api/v1/time/apply');
    assert.equal(applied.statusCode, 200, applied.body);
    assert.equal(json(applied).running, true, applied.body);
    const chrony = systemAccount('_chrony')!;
    let uid = -1;
    for (let attempt = 0; attempt < 20 && uid !== chrony.uid; attempt++) {
      uid = (await daemonUid(t.app, 'chronyd')).uid;
      if (uid !== chrony.uid) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(uid, chrony.uid, 'chronyd runs as _chrony after start');
    const socket = join(t.runtimeRoot, 'chronyd', 'state', 'chronyd.sock');
    for (let attempt = 0; attempt < 20 && spawnSync('test', ['-S', socket]).status !== 0; attempt++) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(statSync(socket).uid, chrony.uid);
    const tracking = spawnSync(findProgram('chronyc')!, ['-h', socket, '-c', 'tracking'], { encoding: 'utf8' });
    assert.equal(tracking.status, 0, tracking.stderr);
    assert.match(tracking.stdout, /Not synchronised/);
  } finally {
    await t.close();
  }
});

test('Kea runs as user _kea with its pid, lock, socket and lease files in the runtime state dir', { skip: skipReason(['kea-dhcp4'], '_kea'), timeout: 60_000 }, async () => {
  const t = await linuxApp();
  try {
    // Loopback only: Kea listens on lo (no client can reach it); the point is who it runs as and where it writes.
    const config = await t.request('PUT', '/api/v1/dhcp/v4/config', { enabled: true, interfaces: ['lo'] });
    assert.equal(config.statusCode, 200, config.body);
    const subnet = await t.request('POST', '/api/v1/dhcp/v4/subnets', { network: '10.239.0.0/24', pool_start: '10.239.0.100', pool_end: '10.239.0.150', gateway: '10.239.0.1' });
    assert.equal(subnet.statusCode, 201, subnet.body);
    const applied = await t.request('POST', '/api/v1/dhcp/v4/apply');
    assert.equal(applied.statusCode, 200, applied.body);
    assert.equal(json(applied).running, true, applied.body);
    const kea = systemAccount('_kea')!;
    const { uid } = await daemonUid(t.app, 'kea-dhcp4');
    assert.equal(uid, kea.uid, 'kea-dhcp4 runs as _kea');
    const state = join(t.runtimeRoot, 'kea-dhcp4', 'state');
    for (let attempt = 0; attempt < 20 && spawnSync('test', ['-S', join(state, 'kea4-ctrl.sock')]).status !== 0; attempt++) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(statSync(join(state, 'kea4-ctrl.sock')).uid, kea.uid);
    assert.equal(statSync(join(state, 'kea-leases4.csv')).uid, kea.uid);
    assert.equal(statSync(join(state, 'kea-dhcp4.kea-dhcp4.pid')).uid, kea.uid, 'the pid file is in the state dir (KEA_PIDFILE_DIR)');
    assert.equal(mode(join(t.runtimeRoot, 'kea-dhcp4')), 0o750);
  } finally {
    await t.close();
  }
});

test('Kea as _kea hands a lease to a DHCP client across a veth between two namespaces the test creates', { skip: skipReason(['kea-dhcp4', 'busybox', 'ip'], '_kea'), timeout: 360_000 }, async () => {
  const id = randomBytes(3).toString('hex');
  const fw = `bwk-fw-${id}`;
  const client = `bwk-cl-${id}`;
  const serverLink = `bkf${id}`;
  const clientLink = `bkc${id}`;
  const { parent, dataDir } = privateDataDir();
  const children: ChildProcess[] = [];
  const run = (file: string, args: string[], timeout = 60_000) => {
    const result = spawnSync(file, args, { encoding: 'utf8', timeout });
    if (result.status !== 0) throw new Error(`${file} ${args.join(' ')}: ${result.stderr || result.error?.message}`);
    return result.stdout;
  };
  try {
    run('ip', ['netns', 'add', fw]);
    run('ip', ['netns', 'add', client]);
    run('ip', ['link', 'add', serverLink, 'netns', fw, 'type', 'veth', 'peer', 'name', clientLink, 'netns', client]);
    run('ip', ['-n', fw, 'addr', 'add', '10.233.0.1/24', 'dev', serverLink]);
    for (const [ns, dev] of [[fw, serverLink], [client, clientLink], [fw, 'lo'], [client, 'lo']]) run('ip', ['-n', ns, 'link', 'set', dev, 'up']);
    const bulwark = spawn('ip', ['netns', 'exec', fw, process.execPath, '--import', 'tsx', join(ROOT, 'src/main.ts'), '--platform', 'linux', '--listen', '127.0.0.1:18081', '--data-dir', dataDir, '--log-level', 'warn'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    children.push(bulwark);
    // 300 s: the first call waits for Bulwark to start from sources, which outlasted 60 s at load 30.
    const api = (...calls: string[][]) => JSON.parse(run('ip', ['netns', 'exec', fw, process.execPath, join(ROOT, 'test/e2e/fixtures/api-calls.mjs'), 'http://127.0.0.1:18081', ...calls.flatMap((c) => [...c, '--'])], 300_000));
    const [config, subnet, applied] = api(
      ['PUT', '/api/v1/dhcp/v4/config', JSON.stringify({ enabled: true, interfaces: [serverLink] })],
      ['POST', '/api/v1/dhcp/v4/subnets', JSON.stringify({ network: '10.233.0.0/24', pool_start: '10.233.0.100', pool_end: '10.233.0.150', gateway: '10.233.0.1' })],
      ['POST', '/api/v1/dhcp/v4/apply'],
    );
    assert.equal(config.status, 200, JSON.stringify(config.body));
    assert.equal(subnet.status, 201, JSON.stringify(subnet.body));
    assert.equal(applied.status, 200, JSON.stringify(applied.body));
    assert.equal(applied.body.running, true, JSON.stringify(applied.body));

    // busybox udhcpc in the client namespace; its script does nothing, the lease line is what counts.
    const udhcpc = spawnSync('ip', ['netns', 'exec', client, 'busybox', 'udhcpc', '-i', clientLink, '-f', '-q', '-n', '-t', '10', '-T', '1', '-s', '/bin/true'], { encoding: 'utf8', timeout: 60_000 });
    const dhcp = `${udhcpc.stdout}${udhcpc.stderr}`; // udhcpc reports on stderr
    assert.equal(udhcpc.status, 0, dhcp);
    assert.match(dhcp, /lease of 10\.233\.0\.1\d\d obtained/);
    const address = /lease of (\S+) obtained/.exec(dhcp)![1];
    const [leases] = api(['GET', '/api/v1/dhcp/v4/leases']);
    assert.ok(leases.body.some((lease: { ip_address: string }) => lease.ip_address === address), JSON.stringify(leases.body));

    const keaPid = run('ip', ['netns', 'pids', fw]).split('\n').filter(Boolean).find((pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'kea-dhcp4');
    assert.ok(keaPid, 'kea-dhcp4 runs in the firewall namespace');
    const uidLine = readFileSync(`/proc/${keaPid}/status`, 'utf8').split('\n').find((l) => l.startsWith('Uid:'))!;
    assert.equal(Number(uidLine.split(/\s+/)[1]), systemAccount('_kea')!.uid, 'kea-dhcp4 runs as _kea');
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const ns of [fw, client]) {
      const pids = spawnSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
      for (const pid of pids) spawnSync('kill', ['-9', pid]);
      spawnSync('ip', ['netns', 'del', ns]);
    }
    rmSync(parent, { recursive: true, force: true });
    rmSync(runtimeRoot({ dataDir }), { recursive: true, force: true });
  }
});
