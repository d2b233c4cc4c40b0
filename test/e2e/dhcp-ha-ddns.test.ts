/**
 * Kea's high availability and DHCP-DDNS as Bulwark renders them, run for real on loopback only: Bulwark's Kea
 * (the primary, as _kea) and a partner Kea the test starts from the same renderer (node 2, the standby) reach
 * the hot-standby state together, which /dhcp/ha/status reads from Kea (status-get). With dynamic DNS on,
 * Bulwark runs kea-dhcp-ddns beside Kea, checked by `kea-dhcp-ddns -t`, answering on its control socket.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createSocket } from 'node:dgram';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { json } from '../helpers/app.js';
import { startAreaApp } from '../helpers/area-app.js';
import { freePort } from '../helpers/free-port.js';
import { systemSkip } from '../helpers/system-skip.js';
import { findProgram } from '../../src/platform/daemon-tools.js';
import { daemonRuntime, runtimeRoot, systemAccount } from '../../src/platform/daemon-runtime.js';
import { keaHookLibrary } from '../../src/platform/kea-hooks.js';
import { renderKea } from '../../src/render/kea/kea.js';
import { keaCommand } from '../../src/platform/kea-control.js';
import { DDNS_LISTEN } from '../../src/render/kea/kea-ddns.js';

const skipReason = (programs: string[]) => systemSkip('running Kea as _kea', {
  root: true,
  programs: [...programs, 'setpriv'],
  users: ['_kea'],
  also: (['libdhcp_lease_cmds.so', 'libdhcp_ha.so'] as const).map((hook) => [`${hook} (kea-common)`, keaHookLibrary(hook)] as const),
});

test('HA: Bulwark\'s Kea and a partner reach hot-standby together; /dhcp/ha/status reads the state from Kea; a restart of Bulwark keeps the applied HA relationship, not a pending edit', { skip: skipReason(['kea-dhcp4']), timeout: 240_000 }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bulwark-ha-'));
  let t = await startAreaApp({ config: { platform: 'linux' }, dataDir });
  const partnerDir = mkdtempSync(join(tmpdir(), 'bulwark-ha-partner-'));
  let partner: ChildProcess | null = null;
  try {
    const [primaryPort, partnerPort] = [await freePort(), await freePort()];
    const ha = { mode: 'hot-standby', listen: `127.0.0.1:${primaryPort}`, peer: `127.0.0.1:${partnerPort}` };
    assert.equal((await t.request('PUT', '/api/v1/dhcp/ha/config', ha)).statusCode, 200);
    assert.equal((await t.request('PUT', '/api/v1/dhcp/v4/config', { enabled: true, interfaces: ['lo'] })).statusCode, 200);
    const subnet = { network: '10.237.0.0/24', pool_start: '10.237.0.100', pool_end: '10.237.0.150', gateway: '10.237.0.1' };
    assert.equal((await t.request('POST', '/api/v1/dhcp/v4/subnets', subnet)).statusCode, 201);
    const applied = await t.request('POST', '/api/v1/dhcp/v4/apply');
    assert.equal(applied.statusCode, 200, applied.body);
    assert.equal(json(applied).running, true);
    const alone = json(await t.request('GET', '/api/v1/dhcp/ha/status'));
    assert.equal(alone.mode, 'hot-standby');
    assert.equal(alone.role, 'primary');
    assert.equal(alone.healthy, false, 'no partner yet');

    // The partner: the same renderer as node 2 (its peer is Bulwark's Kea), run by the test as root.
    chmodSync(partnerDir, 0o755);
    const file = join(partnerDir, 'kea-dhcp4.conf');
    const socket = join(partnerDir, 'ctrl.sock');
    writeFileSync(file, renderKea({
      global: { interfaces: ['lo'], authoritative: true, default_lease_time: 3600, max_lease_time: 86400, dns_servers: [], domain_name: '', domain_search: [], ntp_servers: [], wins_servers: [], log_level: 'info' },
      subnets: [{ id: '7e57a000-0000-4000-8000-000000000001', ...subnet, subnet_type: 'address', enabled: true, trusted_relays: [], options: [] }],
      reservations: [],
      ddns: { enabled: false, forward_zone: '', ttl: 0 },
      paths: { leaseFile: join(partnerDir, 'leases.csv'), controlSocket: socket },
      hooks: { leaseCommands: keaHookLibrary('libdhcp_lease_cmds.so'), highAvailability: keaHookLibrary('libdhcp_ha.so') },
      ha: { mode: 'hot-standby', listen: `127.0.0.1:${partnerPort}`, peer: `127.0.0.1:${primaryPort}`, node_id: 2 },
    }));
    partner = spawn(findProgram('kea-dhcp4')!, ['-c', file], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KEA_PIDFILE_DIR: partnerDir, KEA_LOCKFILE_DIR: partnerDir } });

    let partnerLog = '';
    partner.stdout!.on('data', (chunk: Buffer) => (partnerLog += chunk));
    partner.stderr!.on('data', (chunk: Buffer) => (partnerLog += chunk));
    let status = alone;
    for (let attempt = 0; attempt < 90 && !status.healthy; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      status = json(await t.request('GET', '/api/v1/dhcp/ha/status'));
    }
    assert.deepEqual(status, { mode: 'hot-standby', role: 'primary', state: 'hot-standby', peer_state: 'hot-standby', healthy: true }, `${partnerLog.slice(-3000)}\n${json(await t.request('GET', '/api/v1/dhcp/logs?lines=30')).join('\n')}`);
    const partnerView = await keaCommand(socket, 'status-get');
    const partnerHa = (partnerView.arguments!['high-availability'] as { 'ha-servers': { local: { role: string; state: string } } }[])[0]['ha-servers'].local;
    assert.deepEqual(partnerHa, { ...partnerHa, role: 'standby', state: 'hot-standby' });

    // An HA edit stored without an apply (another peer): pending. Bulwark stops (what SIGTERM runs: app.close())
    // and starts again on the same data directory: Kea keeps its pid and the applied relationship with the partner.
    assert.equal((await t.request('PUT', '/api/v1/dhcp/ha/config', { peer: `127.0.0.1:${await freePort()}` })).statusCode, 200);
    type Daemons = { status(name: string): Promise<{ running: boolean; pid: number | null }> };
    const contextOf = (app: typeof t) => (app.app as unknown as { context: { platform: { daemons: Daemons }; restore: { done(): Promise<void> } } }).context;
    const kea = await contextOf(t).platform.daemons.status('kea-dhcp4');
    await t.app.close();
    assert.ok(existsSync(`/proc/${kea.pid}`), 'Kea outlives the API process');
    t = await startAreaApp({ config: { platform: 'linux' }, dataDir });
    await contextOf(t).restore.done();
    const adopted = await contextOf(t).platform.daemons.status('kea-dhcp4');
    assert.deepEqual([adopted.running, adopted.pid], [true, kea.pid], 'Kea adopted with the applied configuration, not started again with the pending one');
    const running = await keaCommand(join(daemonRuntime({ dataDir }, 'kea-dhcp4', false).stateDir, 'kea4-ctrl.sock'), 'config-get').catch(() => null);
    const peers = running ? JSON.stringify(running.arguments).match(/"url":"http:\/\/127\.0\.0\.1:\d+\/"/g) : null;
    assert.deepEqual(peers?.sort(), [`"url":"http://127.0.0.1:${partnerPort}/"`, `"url":"http://127.0.0.1:${primaryPort}/"`].sort(), `Kea runs the applied peers: ${JSON.stringify(running?.arguments).slice(0, 400)}`);
    const after = json(await t.request('GET', '/api/v1/dhcp/ha/status'));
    assert.deepEqual([after.state, after.peer_state, after.healthy], ['hot-standby', 'hot-standby', true], JSON.stringify(after));
    const appliance = json(await t.request('GET', '/api/v1/status'));
    const dhcp = appliance.services.find((s: { name: string }) => s.name === 'dhcp');
    assert.deepEqual([appliance.ready, dhcp.running, dhcp.waiting_for, dhcp.error], [true, true, null, null], JSON.stringify(appliance.services));
  } finally {
    partner?.kill('SIGTERM');
    await t.close();
    rmSync(runtimeRoot({ dataDir }), { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(partnerDir, { recursive: true, force: true });
  }
});

/** A DNS server on loopback that records the DNS UPDATE messages (opcode 5) it receives and answers NOERROR. */
async function updateCatcher(): Promise<{ port: number; updates: Buffer[]; close(): void }> {
  const socket = createSocket('udp4');
  const updates: Buffer[] = [];
  socket.on('message', (message, from) => {
    if (message.length < 12 || ((message[2]! >> 3) & 0x0f) !== 5) return;
    updates.push(message);
    // Same id and opcode, QR set, rcode 0, no records.
    const answer = Buffer.alloc(12);
    message.copy(answer, 0, 0, 2);
    answer[2] = 0x80 | (5 << 3);
    socket.send(answer, from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { port: socket.address().port, updates, close: () => socket.close() };
}

/** A name-change request as kea-dhcp4 sends it to D2 (JSON after a two-byte length, over UDP). */
async function sendNameChange(host: string, ip: string): Promise<void> {
  const ncr = Buffer.from(JSON.stringify({
    'change-type': 0, 'forward-change': true, 'reverse-change': false, fqdn: `${host}.lan.example.`, 'ip-address': ip,
    dhcid: '010203040506070809', 'lease-expires-on': '20300101000000', 'lease-length': 3600, 'use-conflict-resolution': true,
  }));
  const length = Buffer.alloc(2);
  length.writeUInt16BE(ncr.length);
  const socket = createSocket('udp4');
  await new Promise<void>((resolve, reject) => socket.send(Buffer.concat([length, ncr]), DDNS_LISTEN.port, DDNS_LISTEN.address, (error) => (error ? reject(error) : resolve())));
  socket.close();
}

/** Waits until D2 has sent an update naming `host` (its labels are in the message's update section). */
async function updateFor(catcher: { updates: Buffer[] }, host: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!catcher.updates.some((message) => message.includes(Buffer.from(host)))) {
    if (Date.now() > deadline) assert.fail(`no DNS update for ${host} reached the DNS server (${catcher.updates.length} updates)`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('DDNS: Bulwark runs kea-dhcp-ddns beside Kea (as _kea); it outlives a restart of Bulwark (same pid, still updating DNS); turning dynamic DNS off stops it', { skip: skipReason(['kea-dhcp4', 'kea-dhcp-ddns']), timeout: 240_000 }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bulwark-ddns-'));
  const catcher = await updateCatcher();
  let t = await startAreaApp({ config: { platform: 'linux' }, dataDir });
  try {
    const ddns = { enabled: true, forward_zone: 'lan.example', reverse_zone_v4: '237.10.in-addr.arpa', dns_server: `127.0.0.1:${catcher.port}`, tsig_key: 'dhcp-update', tsig_secret: 'c2VjcmV0LXRzaWctc2VjcmV0LXRzaWc=' };
    assert.equal((await t.request('PUT', '/api/v1/dhcp/ddns', ddns)).statusCode, 200);
    assert.equal((await t.request('PUT', '/api/v1/dhcp/ddns', { tsig_secret: 'not base64!' })).statusCode, 400);
    assert.equal((await t.request('PUT', '/api/v1/dhcp/v4/config', { enabled: true, interfaces: ['lo'] })).statusCode, 200);
    const applied = await t.request('POST', '/api/v1/dhcp/v4/apply');
    assert.equal(applied.statusCode, 200, applied.body);
    type Daemons = { status(name: string): Promise<{ running: boolean; pid: number | null }> };
    const daemonsOf = (app: typeof t) => (app.app as unknown as { context: { platform: { daemons: Daemons } } }).context.platform.daemons;
    const d2 = await daemonsOf(t).status('kea-dhcp-ddns');
    assert.equal(d2.running, true, 'kea-dhcp-ddns answers on its control socket');
    const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${d2.pid}/status`, 'utf8'))![1]);
    assert.equal(uid, systemAccount('_kea')!.uid);
    const config = readFileSync(join(runtimeRoot({ dataDir: t.dataDir }), 'kea-dhcp-ddns', 'kea-dhcp-ddns.conf'), 'utf8');
    assert.match(config, /"secret": "c2VjcmV0LXRzaWctc2VjcmV0LXRzaWc="/, 'the secret is in the daemon file (root:_kea 0640) only');
    assert.ok(!(await t.request('GET', '/api/v1/dhcp/ddns')).body.includes('c2VjcmV0'), 'and never in an answer');
    await sendNameChange('before-restart', '10.237.0.5');
    await updateFor(catcher, 'before-restart');

    // Bulwark stops (what SIGTERM runs: app.close()) and starts again on the same data directory: kea-dhcp-ddns is
    // detached, keeps running meanwhile and is adopted (same pid); it still sends the DNS updates.
    await t.app.close();
    assert.ok(existsSync(`/proc/${d2.pid}`), 'kea-dhcp-ddns outlives the API process');
    await sendNameChange('while-down', '10.237.0.6');
    await updateFor(catcher, 'while-down');
    t = await startAreaApp({ config: { platform: 'linux' }, dataDir });
    await (t.app as unknown as { context: { restore: { done(): Promise<void> } } }).context.restore.done();
    const adopted = await daemonsOf(t).status('kea-dhcp-ddns');
    assert.deepEqual([adopted.running, adopted.pid], [true, d2.pid], 'adopted, not started again');
    await sendNameChange('after-restart', '10.237.0.7');
    await updateFor(catcher, 'after-restart');

    assert.equal((await t.request('PUT', '/api/v1/dhcp/ddns', { enabled: false })).statusCode, 200);
    assert.equal((await daemonsOf(t).status('kea-dhcp-ddns')).running, false, 'turning DDNS off stops it (DHCP is re-applied at once)');
  } finally {
    catcher.close();
    // The test's teardown stops the daemons (Kea and D2), which the API's own stop leaves running.
    await t.close().catch(() => undefined);
    rmSync(runtimeRoot({ dataDir }), { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
});
