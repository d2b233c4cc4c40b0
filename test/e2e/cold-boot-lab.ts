/**
 * The cold-boot suite of issue 36 (test/e2e/cold-boot.test.ts declares its tests and their timeouts and runs
 * these steps). The data directory sits inside a 0700 directory, as `--data-dir /root/bulwark/data` gives: a
 * parent no daemon user can traverse (the harder case; a traversable parent asks nothing more).
 *
 * Bulwark `--platform linux` in a firewall namespace between a WAN client, a LAN server and a LAN client:
 * rules blocking two ports from the WAN; the LAN client's link addressed through the API
 * (PUT /interfaces/config); DNS (Unbound) and DHCP (Kea) on that link, a WireGuard tunnel (wireguard-go; its peer
 * is the WAN client) and a static route (to a network behind the LAN server) configured and applied. Then a
 * cold boot as a reboot does it: every process of the firewall namespace killed, everything Bulwark put in its
 * kernel flushed (ruleset, connection table, routes, addresses) and the links down. A probe from the WAN
 * client tries the blocked ports without pause from before the boot step; the boot step (install/bulwark-boot.sh,
 * reading an environment file that points at this data directory) runs, the network comes up (what ifupdown
 * does: the WAN and server links' own addresses; the LAN client's link stays down and unaddressed, as only
 * Bulwark knows it), Bulwark starts again. Proven: the blocked ports never pass, and from the clients' side DNS
 * answers on the address Bulwark put back, a DHCP lease is given, the tunnel carries pings, the static route is in
 * the kernel and carries a connection (VLANs are not part of it: this kernel has no 802.1Q). The figures (ms from
 * the start of the boot step until each is back) are printed as a test diagnostic; docs/appliance.md records them.
 * Needs root and the daemons; mandatory under REQUIRE_SYSTEM_TESTS=1.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { keaHookLibrary } from '../../src/platform/kea-hooks.js';
import { canonicalNftState } from '../../src/platform/linux/nft-listing.js';
import { freePort } from '../helpers/free-port.js';
import { NetnsLab, ROOT, inNamespace, run } from '../helpers/netns-lab.js';
import { systemSkip } from '../helpers/system-skip.js';

const CLIENT = '10.236.1.2';
const FW_WAN = '10.236.1.1';
const SERVER = '10.236.2.2';
const FW_LAN = '10.236.3.1';
const LAN_CLIENT = '10.236.3.2';
/** The network behind the LAN server that only the static route reaches, and an address in it. */
const ROUTED = '10.236.9.0/24';
const ROUTED_HOST = '10.236.9.1';
const TUNNEL_FW = '10.240.0.1';
const TUNNEL_PEER = '10.240.0.2';
const TUNNEL_PORT = 51836;
const PASSED_PORT = '8080';
const BLOCKED_PORT = '8081';
const LATER_BLOCKED_PORT = '8082';
/** Forwarded by an applied DNAT rule from the firewall's WAN address to the LAN server's passing port. */
const NAT_PORT = '9443';
/** Forwarded by a DNAT rule stored but never applied (pending): it must stay closed. */
const PENDING_NAT_PORT = '9444';
/** How long each service may take to come back after a cold boot (Bulwark's start from sources is slow here). */
const BACK_WITHIN_MS = 240_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A command's exit status and output, without blocking the event loop (the probes run side by side). */
function runAsync(file: string, args: string[], timeoutMs = 10_000): Promise<{ ok: boolean; stdout: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { encoding: 'utf8', timeout: timeoutMs }, (error, stdout, stderr) => resolve({ ok: !error, stdout: `${stdout}${stderr}` }));
  });
}
const inNamespaceAsync = (ns: string, file: string, args: string[], timeoutMs?: number) => runAsync('ip', ['netns', 'exec', ns, file, ...args], timeoutMs);

interface Probe {
  passes: { port: number; at: number }[];
  /** Throws when the probe process has ended (its error output named): a probe that died passes nothing. */
  assertAlive(): void;
  stop(): Promise<{ attempts: Record<string, number>; passes: Record<string, number> }>;
}

export function coldBootSuite(options: { prefix: string }) {
  const skip = systemSkip('the cold-boot suite (data directory in a 0700 parent)', {
    root: true,
    programs: ['ip', 'nft', 'conntrack', 'unbound', 'unbound-control', 'kea-dhcp4', 'wireguard-go', 'wg', 'busybox', 'dig', 'setpriv'],
    users: ['unbound', '_kea'],
    also: [['libdhcp_lease_cmds.so (kea-common)', keaHookLibrary('libdhcp_lease_cmds.so')]],
  });

  let lab: NetnsLab;
  let fw = '';
  let client = '';
  let server = '';
  let lanClient = '';
  let apiPort = 0;
  let wgPrefix = '';
  const links = { wan: '', wanPeer: '', lan: '', lanPeer: '', lanc: '', lancPeer: '', peerWg: '' };
  /** The firewall's own link addresses: what the network brings up at boot (ifupdown), not Bulwark. */
  let fwAddresses: [string, string][] = [];
  /** The LAN client's link: addressed through the API, so only Bulwark's start brings it back. */
  const LAN_ADDRESS = `${FW_LAN}/24`;
  const work = mkdtempSync(join(tmpdir(), 'bulwark-cold-boot-'));
  const envFile = join(work, 'bulwark.env');

  const listTable = () => spawnSync('ip', ['netns', 'exec', fw, 'nft', '-s', 'list', 'table', 'inet', 'bulwark'], { encoding: 'utf8' }).stdout;
  /** The firewall namespace's kernel state, for a failure's message. */
  const kernelState = () => ['nft -s list ruleset', 'ip addr', 'ip route', 'ip neigh', 'sysctl net.ipv4.ip_forward'].map((command) => {
    const [file, ...args] = command.split(' ');
    const result = spawnSync('ip', ['netns', 'exec', fw, file, ...args], { encoding: 'utf8' });
    return `# ${command}\n${result.stdout}${result.stderr}`;
  }).join('\n');
  const keptFile = () => join(lab.dataDir, 'boot/ruleset.nft');

  /** Polls `check` every 50 ms until it is true; the milliseconds it took, or throws after `limitMs`. */
  async function until(what: string, check: () => boolean, limitMs = 60_000): Promise<number> {
    const started = Date.now();
    while (!check()) {
      if (Date.now() - started > limitMs) throw new Error(`${what}: not within ${limitMs} ms\n${lab.log}\nthe firewall namespace:\n${kernelState()}`);
      await sleep(50);
    }
    return Date.now() - started;
  }

  /** One connection attempt (1 s at most) from `from` to `host`: whether the LAN server answered. */
  const reaches = (port: string, from = client, host = SERVER) =>
    spawnSync('ip', ['netns', 'exec', from, process.execPath, join(ROOT, 'test/e2e/fixtures/tcp-ask.mjs'), host, port, '1000'], { encoding: 'utf8', timeout: 5000 }).stdout.includes('LAN');

  // ---- what the clients see of each service (asynchronous: they are polled side by side after the boot) ----
  const clientSees = {
    dns: async () => (await inNamespaceAsync(lanClient, 'dig', ['+time=1', '+tries=1', '+short', `@${FW_LAN}`, 'nas.home.lan', 'A'])).stdout.trim() === '192.168.1.10',
    dhcp: async () => /lease of \S+ obtained/.test((await inNamespaceAsync(lanClient, 'busybox', ['udhcpc', '-i', links.lancPeer, '-f', '-q', '-n', '-t', '1', '-T', '1', '-s', '/bin/true'])).stdout),
    tunnel: async () => (await inNamespaceAsync(client, 'busybox', ['ping', '-c', '1', '-W', '1', TUNNEL_FW])).ok,
    nat: async () => (await inNamespaceAsync(client, process.execPath, [join(ROOT, 'test/e2e/fixtures/tcp-ask.mjs'), FW_WAN, NAT_PORT, '1000'])).stdout.includes('LAN'),
    route: async () => /via 10\.236\.2\.2/.test((await runAsync('ip', ['-n', fw, '-4', 'route', 'show', ROUTED])).stdout)
      && (await inNamespaceAsync(lanClient, process.execPath, [join(ROOT, 'test/e2e/fixtures/tcp-ask.mjs'), ROUTED_HOST, PASSED_PORT, '1000'])).stdout.includes('LAN'),
  };
  type Seen = keyof typeof clientSees;

  /** GET /status from Bulwark's namespace without blocking (the client signs in first). */
  async function statusAsync(): Promise<any> {
    const answer = await inNamespaceAsync(fw, process.execPath, [join(ROOT, 'test/e2e/fixtures/api-calls.mjs'), lab.base, 'GET', '/api/v1/status'], 60_000);
    try {
      const [status] = JSON.parse(answer.stdout);
      return status.status === 200 ? status.body : null;
    } catch {
      return null;
    }
  }

  /** A reboot as the kernel sees it: every process gone; Bulwark's ruleset, routes, addresses and the connection table gone; links down. */
  async function powerOff(): Promise<void> {
    const pids = () => spawnSync('ip', ['netns', 'pids', fw], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
    for (const pid of pids()) spawnSync('kill', ['-9', pid]);
    await until('every process of the firewall namespace gone', () => pids().length === 0, 10_000);
    inNamespace(fw, 'nft', ['flush', 'ruleset']);
    spawnSync('ip', ['netns', 'exec', fw, 'conntrack', '-F'], { stdio: 'ignore' });
    for (const family of ['-4', '-6']) spawnSync('ip', ['-n', fw, family, 'route', 'flush', 'table', 'main'], { stdio: 'ignore' });
    networkDown();
    // /run is empty after a reboot: the socket of the killed wireguard-go goes with it.
    for (const socket of wgSockets()) rmSync(socket, { force: true });
    assert.equal(inNamespace(fw, 'ip', ['-4', 'route', 'show', ROUTED]).trim(), '', 'the static route is gone');
    assert.equal(inNamespace(fw, 'ip', ['-o', 'link', 'show', 'type', 'tun']).trim(), '', 'the tunnel interface is gone');
    assert.equal(inNamespace(fw, 'ip', ['-4', '-o', 'address', 'show', 'dev', links.lanc]).trim(), '', 'the LAN address set through the API is gone');
  }
  const wgSockets = () => spawnSync('sh', ['-c', `ls /var/run/wireguard/${wgPrefix}*.sock 2>/dev/null`], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  function networkDown(): void {
    for (const name of [...fwAddresses.map(([link]) => link), links.lanc]) {
      run('ip', ['-n', fw, 'addr', 'flush', 'dev', name]);
      run('ip', ['-n', fw, 'link', 'set', name, 'down']);
    }
  }
  /** What ifupdown does after network-pre.target: the links' addresses and links up. */
  function networkUp(): void {
    for (const [name, address] of fwAddresses) {
      run('ip', ['-n', fw, 'addr', 'add', address, 'dev', name]);
      run('ip', ['-n', fw, 'link', 'set', name, 'up']);
    }
    // Failed neighbour entries left by the probes while the firewall was away would answer "unreachable" for a while.
    for (const ns of [client, server, lanClient]) spawnSync('ip', ['-n', ns, 'neigh', 'flush', 'all']);
  }

  /** The boot step as bulwark-boot.service runs it; its duration in ms. */
  function bootStep(): { ms: number; stderr: string } {
    const started = performance.now();
    const result = spawnSync('ip', ['netns', 'exec', fw, 'sh', join(ROOT, 'install/bulwark-boot.sh'), envFile], { encoding: 'utf8', timeout: 30_000 });
    const ms = performance.now() - started;
    assert.equal(result.status, 0, `the boot step failed: ${result.stderr}`);
    return { ms, stderr: result.stderr };
  }

  /** The continuous probe from the WAN client (fixtures/tcp-probe-loop.mjs), started before the boot step. */
  async function startProbe(): Promise<Probe> {
    const child: ChildProcess = lab.spawnIn(client, process.execPath, [join(ROOT, 'test/e2e/fixtures/tcp-probe-loop.mjs'), SERVER, BLOCKED_PORT, LATER_BLOCKED_PORT, PASSED_PORT]);
    const passes: { port: number; at: number }[] = [];
    let summary: { attempts: Record<string, number>; passes: Record<string, number> } | undefined;
    let buffer = '';
    let errors = '';
    child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    let ready!: () => void;
    const isReady = new Promise<void>((resolve) => (ready = resolve));
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let newline;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line === 'ready') ready();
        else if (line.startsWith('{"port"')) passes.push(JSON.parse(line));
        else if (line.startsWith('{"attempts"')) summary = JSON.parse(line);
      }
    });
    await isReady;
    return {
      passes,
      assertAlive() {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the probe ended (${child.exitCode ?? child.signalCode}): ${errors.slice(-2000)}`);
      },
      async stop() {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
        if (!summary) throw new Error('the probe printed no summary');
        return summary;
      },
    };
  }
  /** When the passing port first answered at or after `since` (epoch ms). */
  const firstPass = (probe: Probe, since: number) => {
    probe.assertAlive();
    return probe.passes.find((p) => p.port === Number(PASSED_PORT) && p.at >= since)?.at;
  };

  /** Bulwark started again on the same data directory; ms until it answered GET /status (signed in, from its namespace). */
  function startBulwark(): void {
    lab.startBulwark(fw, apiPort, ['--wireguard-prefix', wgPrefix]);
  }

  /**
   * Polls `check` (asynchronous) until it is true: ms from `t0` when it first was, or the reason it never was
   * within BACK_WITHIN_MS.
   */
  async function backAt(check: () => Promise<boolean>, t0: number): Promise<number> {
    for (;;) {
      if (await check().catch(() => false)) return Date.now() - t0;
      if (Date.now() - t0 > BACK_WITHIN_MS) throw new Error(`not back within ${BACK_WITHIN_MS} ms of the boot step`);
      await sleep(100);
    }
  }

  async function setup(): Promise<void> {
    if (skip) return;
    lab = new NetnsLab(options.prefix, { privateParent: true });
    fw = lab.namespace('fw');
    client = lab.namespace('cl');
    server = lab.namespace('sv');
    lanClient = lab.namespace('lc');
    const t = lab.tag.slice(-7);
    Object.assign(links, { wan: `${options.prefix}w${t}`, wanPeer: `${options.prefix}W${t}`, lan: `${options.prefix}l${t}`, lanPeer: `${options.prefix}L${t}`, lanc: `${options.prefix}c${t}`, lancPeer: `${options.prefix}C${t}`, peerWg: `${options.prefix}p${t}` });
    wgPrefix = `${options.prefix}${t}g`;
    fwAddresses = [[links.wan, `${FW_WAN}/24`], [links.lan, '10.236.2.1/24']];
    lab.link({ ns: fw, name: links.wan, address: `${FW_WAN}/24` }, { ns: client, name: links.wanPeer, address: `${CLIENT}/24` });
    lab.link({ ns: fw, name: links.lan, address: '10.236.2.1/24' }, { ns: server, name: links.lanPeer, address: `${SERVER}/24` });
    lab.link({ ns: fw, name: links.lanc }, { ns: lanClient, name: links.lancPeer, address: `${LAN_CLIENT}/24` });
    run('ip', ['-n', client, 'route', 'add', 'default', 'via', FW_WAN]);
    run('ip', ['-n', server, 'route', 'add', 'default', 'via', '10.236.2.1']);
    run('ip', ['-n', lanClient, 'route', 'add', 'default', 'via', FW_LAN]);
    // The network behind the LAN server, reached only through the firewall's static route.
    run('ip', ['-n', server, 'addr', 'add', `${ROUTED_HOST}/32`, 'dev', 'lo']);
    // The host's own sysctl.d (not Bulwark's): a reboot brings it back before the boot step.
    inNamespace(fw, 'sysctl', ['-q', '-w', 'net.ipv4.ip_forward=1']);
    for (const port of [PASSED_PORT, BLOCKED_PORT, LATER_BLOCKED_PORT]) {
      const listener = lab.spawnIn(server, process.execPath, [join(ROOT, 'test/e2e/fixtures/tcp-say.mjs'), port, 'LAN']);
      await new Promise((resolve) => listener.stdout!.once('data', resolve));
    }
    apiPort = await freePort();
    // The environment file as /etc/bulwark/bulwark.env has it, with this test's (non-default) data directory.
    writeFileSync(envFile, `BULWARK_DATA_DIR=${lab.dataDir}\nBULWARK_PLATFORM=linux\nBULWARK_LISTEN=127.0.0.1:${apiPort}\n`);
    startBulwark();
  }

  async function cleanup(): Promise<void> {
    if (lab) await lab.cleanup();
    for (const socket of lab ? wgSockets() : []) rmSync(socket, { force: true });
    rmSync(work, { recursive: true, force: true });
  }

  async function rulesApplied(): Promise<void> {
    assert.equal(reaches(BLOCKED_PORT), true, 'open before any rule');
    const [rule, first] = lab.api(
      ['POST', '/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', interface: links.wan, dst_port_start: Number(BLOCKED_PORT), label: 'cold-boot' }],
      ['POST', '/api/v1/reload'],
    );
    assert.equal(rule.status, 201, JSON.stringify(rule.body));
    assert.equal(first.status, 200, JSON.stringify(first.body));
    // A second rule loaded as a delta: the kept file must still be the whole table the kernel now holds.
    const [later, second] = lab.api(
      ['POST', '/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', interface: links.wan, dst_port_start: Number(LATER_BLOCKED_PORT), label: 'cold-boot-later' }],
      ['POST', '/api/v1/reload'],
    );
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.equal(second.body.apply_mode, 'delta');
    assert.deepEqual([reaches(PASSED_PORT), reaches(BLOCKED_PORT), reaches(LATER_BLOCKED_PORT)], [true, false, false]);

    const loaded = canonicalNftState(listTable()).fingerprint;
    await until('the kept ruleset written', () => existsSync(keptFile()) && readFileSync(keptFile(), 'utf8').includes(later.body.id), 10_000);
    // Loaded alone into the kernel, the kept file gives exactly the table the delta left.
    inNamespace(fw, 'nft', ['flush', 'ruleset']);
    inNamespace(fw, 'nft', ['-f', keptFile()]);
    assert.equal(canonicalNftState(listTable()).fingerprint, loaded, 'the kept file is the table the kernel held after the delta');
  }

  async function servicesApplied(): Promise<void> {
    // The LAN client's link gets its address through the API (recorded as applied: a start puts it back).
    const lanLink = lab.call('PUT', `/api/v1/interfaces/config/${links.lanc}`, { ipv4_mode: 'static', ipv4_address: LAN_ADDRESS, enabled: true });
    assert.equal(lanLink.applied, true, JSON.stringify(lanLink));
    // DNS on the LAN client's side of the firewall, with a host record the client asks for.
    lab.call('PUT', '/api/v1/dns/resolver/config', { enabled: true, listen_interfaces: [FW_LAN, '127.0.0.1'], port: 53, forwarding_enabled: false, dnssec: false, rebind_protection: false });
    lab.call('POST', '/api/v1/dns/resolver/acls', { network: '10.236.3.0/24', action: 'allow' });
    lab.call('POST', '/api/v1/dns/resolver/hosts', { hostname: 'nas', domain: 'home.lan', value: '192.168.1.10' });
    assert.equal(lab.call('POST', '/api/v1/dns/resolver/apply').running, true);
    // DHCP on the same link.
    lab.call('PUT', '/api/v1/dhcp/v4/config', { enabled: true, interfaces: [links.lanc] });
    lab.call('POST', '/api/v1/dhcp/v4/subnets', { network: '10.236.3.0/24', pool_start: '10.236.3.100', pool_end: '10.236.3.150', gateway: FW_LAN });
    assert.equal(lab.call('POST', '/api/v1/dhcp/v4/apply').running, true);
    // The tunnel; its peer is the WAN client, with a key pair of its own.
    const peerKey = run('wg', ['genkey']).trim();
    const peerPublic = spawnSync('wg', ['pubkey'], { input: peerKey, encoding: 'utf8' }).stdout.trim();
    const tunnel = lab.call('POST', '/api/v1/vpn/wg', { name: 'office', listen_port: TUNNEL_PORT, address: `${TUNNEL_FW}/24`, endpoint_host: FW_WAN });
    lab.call('POST', `/api/v1/vpn/wg/${tunnel.id}/peers`, { name: 'road', allowed_ips: `${TUNNEL_PEER}/32`, public_key: peerPublic });
    lab.call('POST', `/api/v1/vpn/wg/${tunnel.id}/start`);
    lab.spawnIn(client, 'wireguard-go', ['-f', links.peerWg]);
    await until(`${links.peerWg} created`, () => existsSync(`/var/run/wireguard/${links.peerWg}.sock`), 30_000);
    const peerConf = join(work, 'peer.conf');
    writeFileSync(peerConf, `[Interface]\nPrivateKey = ${peerKey}\n\n[Peer]\nPublicKey = ${tunnel.public_key}\nEndpoint = ${FW_WAN}:${TUNNEL_PORT}\nAllowedIPs = 10.240.0.0/24\nPersistentKeepalive = 5\n`, { mode: 0o600 });
    inNamespace(client, 'wg', ['setconf', links.peerWg, peerConf]);
    inNamespace(client, 'ip', ['address', 'add', `${TUNNEL_PEER}/24`, 'dev', links.peerWg]);
    inNamespace(client, 'ip', ['link', 'set', links.peerWg, 'up']);
    // A static route to the network behind the LAN server.
    lab.call('POST', '/api/v1/routes', { destination: ROUTED, gateway: SERVER, interface: links.lan });
    // NAT and a geo-IP set in the same table: a DNAT from the WAN address to the LAN server, a country blocked.
    lab.call('POST', '/api/v1/nat', { nat_type: 'dnat', interface: links.wan, protocol: 'tcp', dst_addr: FW_WAN, dst_port_start: Number(NAT_PORT), redirect_addr: SERVER, redirect_port_start: Number(PASSED_PORT) });
    lab.call('POST', '/api/v1/geoip', { country_code: 'VA', action: 'block' });
    // A coordinated apply records the version every service runs.
    lab.call('POST', '/api/v1/reload');
    assert.match(listTable(), /set geoip_block_v4 \{[^}]*elements = /, 'the applied table holds the geo-IP set with its networks');
    // Edits stored and never applied: a rule blocking the passing port, another DNAT. Pending across the cold boot.
    lab.call('POST', '/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', interface: links.wan, dst_port_start: Number(PASSED_PORT), label: 'cold-boot-pending' });
    lab.call('POST', '/api/v1/nat', { nat_type: 'dnat', interface: links.wan, protocol: 'tcp', dst_addr: FW_WAN, dst_port_start: Number(PENDING_NAT_PORT), redirect_addr: SERVER, redirect_port_start: Number(PASSED_PORT) });
    assert.deepEqual([reaches(PASSED_PORT), reaches(PENDING_NAT_PORT, client, FW_WAN)], [true, false], 'the pending edits are not in force');

    const seen: Partial<Record<Seen, boolean>> = {};
    for (const [name, check] of Object.entries(clientSees)) {
      seen[name as Seen] = await backAt(check, Date.now()).then(() => true, () => false);
    }
    assert.deepEqual(seen, { dns: true, dhcp: true, tunnel: true, nat: true, route: true }, `every service serves before the cold boot\n${lab.log}`);
  }

  async function coldBoot(t: TestContext): Promise<void> {
    const before = canonicalNftState(listTable()).fingerprint;
    await powerOff();
    // Control: with nothing loaded and the network up, the blocked port does pass and nothing else answers.
    networkUp();
    await until('the blocked port open without a ruleset (control)', () => reaches(BLOCKED_PORT), 10_000);
    assert.equal(await clientSees.dns(), false, 'no DNS before Bulwark is back (control)');
    assert.equal(await clientSees.route(), false, 'no static route before Bulwark is back (control)');
    networkDown();

    const probe = await startProbe();
    const t0 = Date.now();
    const back = Object.fromEntries(Object.entries(clientSees).map(([name, check]) => [name, backAt(check, t0)])) as Record<Seen, Promise<number>>;
    const boot = bootStep();
    const rulesetMs = Date.now() - t0;
    const afterBoot = listTable();
    const networkAt = Date.now();
    networkUp();
    const startedAt = Date.now();
    startBulwark();
    let status: any = null;
    const ready = backAt(async () => (status = await statusAsync())?.ready === true, t0);
    const answered = backAt(async () => (await statusAsync()) !== null, t0);
    const outcomes = await Promise.allSettled([...Object.values(back), ready, answered]);
    const names = [...Object.keys(back), 'ready', 'answered'];
    const figures: Record<string, number | string> = { boot_step_ms: Math.round(boot.ms), ruleset_ms: rulesetMs, network_up_ms: networkAt - t0, bulwark_started_ms: startedAt - t0 };
    outcomes.forEach((outcome, i) => (figures[`${names[i]}_ms`] = outcome.status === 'fulfilled' ? outcome.value : `not back: ${(outcome.reason as Error).message}`));
    await until('the passing port answers through the firewall', () => firstPass(probe, networkAt) !== undefined, 30_000);
    figures.passing_port_ms = firstPass(probe, networkAt)! - t0;
    const summary = await probe.stop();
    figures.blocked_port_attempts = summary.attempts[BLOCKED_PORT] + summary.attempts[LATER_BLOCKED_PORT];
    figures.blocked_port_passes = probe.passes.filter((p) => p.port !== Number(PASSED_PORT)).length;
    t.diagnostic(`figures ${JSON.stringify({ private_parent: true, ...figures })}`);

    assert.deepEqual(probe.passes.filter((p) => p.port !== Number(PASSED_PORT)), [], 'no connection to a blocked port was ever accepted');
    assert.ok(summary.attempts[BLOCKED_PORT] >= 10, `the blocked port was tried throughout (${summary.attempts[BLOCKED_PORT]} attempts)`);
    assert.equal(canonicalNftState(afterBoot).fingerprint, before, 'the boot step loaded the table last applied');
    const notBack = names.filter((_, i) => outcomes[i].status === 'rejected');
    assert.deepEqual(notBack, [], `everything back after the cold boot: ${JSON.stringify(figures)}\n/status: ${JSON.stringify(status?.services)}\n${lab.log}`);
    assert.equal(canonicalNftState(listTable()).fingerprint, before, 'Bulwark\'s own load at start left the same table (filter, NAT and geo-IP set as applied; the pending edits not in it)');
    assert.equal(reaches(PENDING_NAT_PORT, client, FW_WAN), false, 'the pending DNAT stays pending');
    assert.equal(status.boot.loaded, 'applied');
    assert.match(status.boot.reason, /last applied ruleset was loaded before the network came up/);
  }

  async function corruptedBoot(t: TestContext): Promise<void> {
    const before = canonicalNftState(listTable()).fingerprint;
    await powerOff();
    const lines = readFileSync(keptFile(), 'utf8').split('\n');
    lines[8] = 'this is not nftables';
    writeFileSync(keptFile(), lines.join('\n'));

    const probe = await startProbe();
    const boot = bootStep();
    assert.match(boot.stderr, /fallback \(refused\)/);
    const table = listTable();
    assert.match(table, /policy drop;/, 'the fallback drops what it does not let in');
    assert.doesNotMatch(table, /rule [0-9a-f-]{36}/, 'nothing of the refused file was loaded');
    const networkAt = Date.now();
    networkUp();
    const startedAt = Date.now();
    startBulwark();
    const [answer] = lab.api(['GET', '/api/v1/status']);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const status = answer.body;
    assert.equal(status.boot.loaded, 'fallback');
    assert.equal(status.boot.refused_line, 9);
    assert.match(status.boot.reason, /refused the last applied ruleset at line 9; the safe fallback was loaded/);
    // Bulwark loads the applied ruleset at start: the passing port passes again, and the kept file is whole again.
    await until('the passing port answers once Bulwark loaded the applied ruleset', () => firstPass(probe, networkAt) !== undefined, 30_000);
    const passedAt = firstPass(probe, networkAt)!;
    assert.ok(passedAt >= startedAt, 'the fallback let nothing through to the LAN before Bulwark loaded the applied ruleset');
    await until('the kept file rewritten by the load at start', () => !readFileSync(keptFile(), 'utf8').includes('this is not nftables'), 10_000);
    assert.equal(canonicalNftState(listTable()).fingerprint, before);
    const summary = await probe.stop();
    assert.deepEqual(probe.passes.filter((p) => p.port !== Number(PASSED_PORT)), [], 'no connection to a blocked port was ever accepted');
    assert.ok(summary.attempts[BLOCKED_PORT] >= 10);
    t.diagnostic(`boot step with the fallback: ${boot.ms.toFixed(0)} ms; Bulwark start -> passing port answers again (its own load of the applied ruleset): ${passedAt - startedAt} ms`);
  }

  return { skip, setup, cleanup, rulesApplied, servicesApplied, coldBoot, corruptedBoot };
}
