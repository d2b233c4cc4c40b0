/**
 * IPsec proven from the other side: Bulwark (`--platform linux`) runs its own charon in a firewall namespace;
 * a second charon, configured by this test, runs in a peer namespace. Behind each gateway sits a LAN namespace
 * (10.113.1.0/24 and 10.113.2.0/24). This kernel has no ESP, so both charons carry ESP with strongSwan's
 * userspace kernel-libipsec (a TUN device, ESP in UDP). With a pre-shared key the peer initiates, with
 * certificates of Bulwark's local CA Bulwark initiates; each time the IKE SA and the CHILD SA establish,
 * `/vpn/ipsec/status` shows them, and ping and TCP pass between the two LANs. A killed charon is restarted and
 * its SA comes back. An invalid SA is refused with a
 * 400 naming the field and changes nothing; deleting the last SA stops charon and the traffic with it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findProgram } from '../../src/platform/daemon-tools.js';
import { systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';
import { inNamespace, NetnsLab } from '../helpers/netns-lab.js';
import { pings, pong, pongServer } from '../helpers/pong.js';
import { daemonLogWith, secretsInLogs } from '../helpers/daemon-log-file.js';

const PLUGINS = '/usr/lib/ipsec/plugins';

const skipReason = () => systemSkip('the IPsec namespace lab', {
  root: true,
  programs: ['charon-systemd', 'swanctl', 'ip', 'busybox'],
  also: ['kernel-libipsec', 'openssl'].map((plugin) => [`the ${plugin} plugin`, existsSync(`${PLUGINS}/libstrongswan-${plugin}.so`)] as const),
});

const TCP_PORT = 8113;
const TCP_SERVER = pongServer(TCP_PORT);
const tcp = (ns: string, host: string) => pong(ns, host, TCP_PORT);

async function until<T>(what: string, check: () => T | undefined | false, timeoutMs = 20_000): Promise<T> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    const value = check();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
}

/** The peer's own charon: strongswan.conf and swanctl.conf written by the test, its own VICI socket. */
class PeerCharon {
  readonly dir: string;
  constructor(private readonly lab: NetnsLab, private readonly ns: string) {
    this.dir = join(lab.dataDir, 'peer-charon');
    for (const sub of ['x509', 'x509ca', 'private']) mkdirSync(join(this.dir, 'swanctl', sub), { recursive: true, mode: 0o700 });
    writeFileSync(join(this.dir, 'strongswan.conf'), [
      'charon-systemd {',
      '  load = random nonce openssl aes sha1 sha2 hmac gmp pem pkcs1 pkcs8 x509 revocation constraints pubkey kdf socket-default vici kernel-libipsec kernel-netlink',
      `  plugins { vici { socket = "unix://${this.dir}/charon.vici" } }`,
      '  filelog { stderr { default = 1 } }',
      '  journal { default = -1 }',
      '}',
      `swanctl { load = pem pkcs1 pkcs8 x509 openssl\n  socket = "unix://${this.dir}/charon.vici" }`,
      '',
    ].join('\n'));
  }

  start(): void {
    this.lab.spawnIn(this.ns, 'env', [`STRONGSWAN_CONF=${join(this.dir, 'strongswan.conf')}`, findProgram('charon-systemd')!]);
  }

  swanctl(...args: string[]): string {
    const result = spawnSync('ip', ['netns', 'exec', this.ns, 'env', `STRONGSWAN_CONF=${join(this.dir, 'strongswan.conf')}`, `SWANCTL_DIR=${join(this.dir, 'swanctl')}`,
      'swanctl', ...args, '--uri', `unix://${this.dir}/charon.vici`], { encoding: 'utf8', timeout: 30_000 });
    if (result.status !== 0) throw new Error(`swanctl ${args.join(' ')}: ${result.stdout}${result.stderr}`);
    return result.stdout;
  }

  load(conf: string): void {
    writeFileSync(join(this.dir, 'swanctl', 'swanctl.conf'), conf, { mode: 0o600 });
    this.swanctl('--load-all', '--clear', '--file', join(this.dir, 'swanctl', 'swanctl.conf'));
  }
}

/** The peer's side of the SA: the mirror image of what Bulwark is given. */
function peerConf(auth: { psk: string } | { cert: string; ca: string }): string {
  const side = (id: string, extra: string[]) => [`auth = ${'psk' in auth ? 'psk' : 'pubkey'}`, `id = ${id}`, ...extra].join('\n      ');
  return `connections {
  fw {
    version = 2
    local_addrs = 192.168.133.2
    remote_addrs = 192.168.133.1
    proposals = aes256-sha256-modp2048
    encap = yes
    local {
      ${side('peer.b13.test', 'cert' in auth ? [`certs = ${auth.cert}`] : [])}
    }
    remote {
      ${side('fw.b13.test', 'cert' in auth ? [`cacerts = ${auth.ca}`] : [])}
    }
    children {
      net {
        local_ts = 10.113.2.0/24
        remote_ts = 10.113.1.0/24
        esp_proposals = aes256gcm16
        start_action = none
      }
    }
  }
}
secrets {
${'psk' in auth ? `  ike-fw {\n    id-1 = fw.b13.test\n    id-2 = peer.b13.test\n    secret = "${auth.psk}"\n  }` : ''}
}
`;
}

test('an IPsec SA driven by Bulwark establishes with a charon the test runs and carries traffic between the two LANs', { skip: skipReason(), timeout: 540_000 }, async (t) => {
  const lab = new NetnsLab('b13');
  try {
    const lanA = lab.namespace('la');
    const fw = lab.namespace('fw');
    const peer = lab.namespace('pe');
    const lanB = lab.namespace('lb');
    lab.link({ ns: lanA, name: `b13k${lab.tag}`, address: '10.113.1.2/24' }, { ns: fw, name: `b13l${lab.tag}`, address: '10.113.1.1/24' });
    lab.link({ ns: fw, name: `b13m${lab.tag}`, address: '192.168.133.1/24' }, { ns: peer, name: `b13n${lab.tag}`, address: '192.168.133.2/24' });
    lab.link({ ns: peer, name: `b13o${lab.tag}`, address: '10.113.2.1/24' }, { ns: lanB, name: `b13p${lab.tag}`, address: '10.113.2.2/24' });
    inNamespace(lanA, 'ip', ['route', 'add', 'default', 'via', '10.113.1.1']);
    inNamespace(lanB, 'ip', ['route', 'add', 'default', 'via', '10.113.2.1']);
    for (const gateway of [fw, peer]) inNamespace(gateway, 'sysctl', ['-q', '-w', 'net.ipv4.ip_forward=1']);
    lab.spawnIn(lanB, process.execPath, ['-e', TCP_SERVER]);
    // Without the tunnel the LANs cannot reach each other: the gateways have no route to the far LAN.
    assert.equal(pings(lanA, '10.113.2.2'), false);

    const peerCharon = new PeerCharon(lab, peer);
    peerCharon.start();
    await until('the peer charon answers', () => spawnSync('test', ['-S', join(peerCharon.dir, 'charon.vici')]).status === 0);
    const psk = 'b13-shared-secret-0123456789';
    peerCharon.load(peerConf({ psk }));

    const port = await freePort();
    lab.startBulwark(fw, port);
    // Refused before anything is written: an unknown algorithm, a missing certificate, a network to initiate to.
    const sa = { name: 'branch', local_addr: '192.168.133.1', remote_addr: '192.168.133.2', protocol: 'esp', mode: 'tunnel', local_id: 'fw.b13.test', remote_id: 'peer.b13.test', local_ts: '10.113.1.0/24', remote_ts: ['10.113.2.0/24'] };
    const [badProposal, badCert] = lab.api(['POST', '/api/v1/vpn/ipsec', { ...sa, psk, ike_proposals: 'aes256-sha256-modp2047' }], ['POST', '/api/v1/vpn/ipsec', { ...sa, auth_method: 'cert' }]);
    assert.equal(badProposal.status, 400);
    assert.match(badProposal.body.error, /^body\.ike_proposals: "modp2047" is not a strongSwan algorithm name/);
    assert.equal(badCert.status, 400);
    assert.match(badCert.body.error, /^body\.certificate_id is required/);
    assert.deepEqual(lab.call('GET', '/api/v1/vpn/ipsec'), [], 'nothing was stored');

    // Pre-shared key; the peer initiates.
    const created = lab.call('POST', '/api/v1/vpn/ipsec', { ...sa, psk, start_action: 'none' });
    assert.equal(created.has_psk, true);
    assert.ok(!JSON.stringify(created).includes(psk), 'the key is never returned');
    const loaded = lab.call('GET', '/api/v1/vpn/ipsec/status');
    assert.equal(loaded.running, true, JSON.stringify(loaded));
    assert.equal(loaded.data_path, 'libipsec');
    const initiated = Date.now();
    peerCharon.swanctl('--initiate', '--child', 'net', '--timeout', '20');
    const ikeMs = Date.now() - initiated;
    const up = await until('Bulwark reports the SA up', () => {
      const status = lab.call('GET', '/api/v1/vpn/ipsec/status');
      return status.sas[0]?.status === 'up' ? status : undefined;
    });
    const [state] = up.sas;
    assert.equal(state.id, created.id);
    assert.equal(state.ike_state, 'ESTABLISHED');
    assert.match(state.remote_host, /^192\.168\.133\.2$/);
    assert.equal(state.child_sas.length, 1);
    assert.equal(state.child_sas[0].state, 'INSTALLED');
    assert.deepEqual([state.child_sas[0].local_ts, state.child_sas[0].remote_ts], [['10.113.1.0/24'], ['10.113.2.0/24']]);
    assert.equal(state.child_sas[0].protocol, 'esp');
    assert.equal(state.child_sas[0].encap, true);

    assert.equal(await until('LAN A pings LAN B through the tunnel', () => pings(lanA, '10.113.2.2')), true);
    assert.equal(tcp(lanA, '10.113.2.2'), 'pong 10.113.1.2', 'TCP crosses the tunnel unchanged (no NAT)');
    const counted = lab.call('GET', '/api/v1/vpn/ipsec/status').sas[0].child_sas[0];
    assert.ok(counted.bytes_in > 0 && counted.bytes_out > 0 && counted.packets_in > 0, JSON.stringify(counted));
    const peerSas = peerCharon.swanctl('--list-sas', '--raw');
    assert.match(peerSas, /state=ESTABLISHED/, 'the peer sees the same SA');

    // An invalid change is refused and the SA keeps running.
    const [refused] = lab.api(['PUT', `/api/v1/vpn/ipsec/${created.id}`, { esp_proposals: 'aes256-blowfish' }]);
    assert.equal(refused.status, 400);
    assert.match(refused.body.error, /^body\.esp_proposals/);
    assert.equal(tcp(lanA, '10.113.2.2'), 'pong 10.113.1.2');

    // Certificates of the local CA; Bulwark initiates on load.
    lab.call('POST', '/api/v1/ca', { common_name: 'b13 test CA' });
    const fwCert = lab.call('POST', '/api/v1/ca/certs', { cert_type: 'server', common_name: 'fw.b13.test' });
    const peerCert = lab.call('POST', '/api/v1/ca/certs', { cert_type: 'client', common_name: 'peer.b13.test' });
    writeFileSync(join(peerCharon.dir, 'swanctl', 'x509', 'peer.pem'), peerCert.certificate_pem);
    writeFileSync(join(peerCharon.dir, 'swanctl', 'private', 'peer.pem'), peerCert.private_key_pem, { mode: 0o600 });
    writeFileSync(join(peerCharon.dir, 'swanctl', 'x509ca', 'ca.pem'), peerCert.ca_certificate_pem);
    peerCharon.swanctl('--terminate', '--ike', 'fw', '--timeout', '10');
    peerCharon.load(peerConf({ cert: 'peer.pem', ca: 'ca.pem' }));
    const switched = Date.now();
    lab.call('PUT', `/api/v1/vpn/ipsec/${created.id}`, { auth_method: 'cert', certificate_id: fwCert.id, start_action: 'start' });
    const certUp = await until('the certificate-authenticated SA is up', () => {
      const status = lab.call('GET', '/api/v1/vpn/ipsec/status');
      return status.sas[0]?.status === 'up' ? status : undefined;
    });
    const certMs = Date.now() - switched;
    assert.equal(certUp.sas[0].child_sas[0].state, 'INSTALLED');
    assert.match(peerCharon.swanctl('--list-sas', '--raw'), /remote-id=CN=fw\.b13\.test|remote-id=fw\.b13\.test/);
    assert.equal(await until('LAN A pings LAN B again', () => pings(lanA, '10.113.2.2')), true);
    assert.equal(tcp(lanA, '10.113.2.2'), 'pong 10.113.1.2');
    // charon killed: status reports it, the supervisor restarts it, loads the SA again and (start_action start) it is back up.
    assert.equal(typeof certUp.pid, 'number');
    assert.ok(existsSync(join(lab.runtimeRoot, 'charon', 'state', 'charon.pid')));
    process.kill(certUp.pid, 'SIGKILL');
    const back = await until('charon restarted with its SA up', () => {
      const status = lab.call('GET', '/api/v1/vpn/ipsec/status');
      return status.restarts >= 1 && status.sas[0]?.status === 'up' ? status : undefined;
    }, 60_000);
    assert.notEqual(back.pid, certUp.pid);
    assert.equal(await until('LAN A pings LAN B after the restart', () => pings(lanA, '10.113.2.2'), 30_000), true);

    // A restart of Bulwark (SIGTERM): charon is detached, so it keeps the SA; the next start adopts it (same pid)
    // and the peer's IKE SA is the same one (same unique id: never renegotiated), still carrying traffic.
    const peerIkeId = () => /uniqueid=(\d+)/.exec(peerCharon.swanctl('--list-sas', '--raw'))?.[1];
    const ikeBefore = peerIkeId();
    assert.ok(ikeBefore, 'the peer lists its IKE SA');
    assert.equal(await lab.stopBulwark('SIGTERM'), 0);
    assert.ok(existsSync(`/proc/${back.pid}`), 'charon outlives the API process');
    assert.equal(tcp(lanA, '10.113.2.2'), 'pong 10.113.1.2', 'the tunnel carries traffic while Bulwark is down');
    lab.startBulwark(fw, port);
    const adopted = await until('Bulwark reports the SA up after its restart', () => {
      const status = lab.call('GET', '/api/v1/vpn/ipsec/status');
      return status.running && status.sas[0]?.status === 'up' ? status : undefined;
    }, 180_000);
    assert.equal(adopted.pid, back.pid, 'charon adopted, not started again');
    assert.equal(peerIkeId(), ikeBefore, 'the same IKE SA');
    assert.equal(tcp(lanA, '10.113.2.2'), 'pong 10.113.1.2');
    const ipsecService = (lab.call('GET', '/api/v1/status').services as { name: string; running: boolean }[]).find((s) => s.name === 'ipsec');
    assert.equal(ipsecService?.running, true, JSON.stringify(ipsecService));

    const certInUse = lab.api(['DELETE', `/api/v1/ca/certs/${fwCert.id}`])[0];
    assert.equal(certInUse.status, 409, 'a certificate an SA uses cannot be deleted');

    // The last SA deleted: charon stops and the LANs are apart again.
    lab.call('DELETE', `/api/v1/vpn/ipsec/${created.id}`, undefined, 204);
    const stopped = lab.call('GET', '/api/v1/vpn/ipsec/status');
    assert.equal(stopped.running, false);
    assert.deepEqual(stopped.sas, []);
    assert.equal(pings(lanA, '10.113.2.2', 2), false);

    // charon's own lines (detached: through its output file) are in the local log; neither the PSK nor a private key is.
    await daemonLogWith(lab.dataDir, 'charon', /IKE_SA .*established/);
    // A line of each key's PEM body: a key printed whole or in part would hold it.
    const privateKeys = [fwCert, peerCert].map((cert) => String(cert.private_key_pem).split('\n')[1]!);
    assert.ok(privateKeys.every((line) => line.length >= 40), 'the issued certificates came with their keys');
    assert.deepEqual(secretsInLogs(lab.dataDir, [psk, ...privateKeys]), [], 'no secret in any local log');
    t.diagnostic(`figures ${JSON.stringify({ psk_initiate_to_established_ms: ikeMs, cert_apply_to_up_ms: certMs })}`);
  } catch (error) {
    throw new Error(`${(error as Error).message}\nBulwark's output:\n${lab.log}`);
  } finally {
    await lab.cleanup();
  }
});
