import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createPublicKey, diffieHellman, createPrivateKey } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { json } from './helpers/app.js';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';
import { sharedFile } from './helpers/shared.js';
import { systemSkip } from './helpers/system-skip.js';
import { generateKeyPair, isWireguardKey, parseWgQuick, publicKeyOf, wgValue } from '../src/areas/vpn/wireguard.js';
import { parseWgDump } from '../src/platform/linux/wireguard.js';
import { HttpError } from '../src/core/errors.js';

let t: AreaApp;
before(async () => {
  t = await startAreaApp();
});
after(() => t.close());

const X25519_PKCS8 = Buffer.from('302e020100300506032b656e04220420', 'hex');
const X25519_SPKI = Buffer.from('302a300506032b656e032100', 'hex');

test('generated key pairs are real X25519 pairs: both sides derive the same shared secret', () => {
  const a = generateKeyPair();
  const b = generateKeyPair();
  for (const key of [a.private_key, a.public_key, b.private_key, b.public_key]) assert.ok(isWireguardKey(key), key);
  assert.equal(publicKeyOf(a.private_key), a.public_key);
  const priv = (k: string) => createPrivateKey({ key: Buffer.concat([X25519_PKCS8, Buffer.from(k, 'base64')]), format: 'der', type: 'pkcs8' });
  const pub = (k: string) => createPublicKey({ key: Buffer.concat([X25519_SPKI, Buffer.from(k, 'base64')]), format: 'der', type: 'spki' });
  const ab = diffieHellman({ privateKey: priv(a.private_key), publicKey: pub(b.public_key) });
  const ba = diffieHellman({ privateKey: priv(b.private_key), publicKey: pub(a.public_key) });
  assert.deepEqual(ab, ba);
});

test('public keys match wireguard-tools `wg pubkey` when it is installed', { skip: systemSkip('comparing with wg pubkey', { programs: ['wg'] }) }, () => {
  const pair = generateKeyPair();
  assert.equal(execFileSync('wg', ['pubkey'], { input: pair.private_key + '\n' }).toString().trim(), pair.public_key);
});

test('wg-quick files from the shared fixtures parse, and their private keys derive to peers\' public keys', { skip: sharedFile('fixtures/wireguard').skip }, () => {
  const dir = sharedFile('fixtures/wireguard').path;
  const byPublicKey = new Map<string, string>();
  let parsed = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.conf'))) {
    const sections = parseWgQuick(readFileSync(join(dir, file), 'utf8'));
    assert.equal(sections[0].name, 'Interface', file);
    assert.ok(sections.slice(1).every((s) => s.name === 'Peer'), file);
    const privateKey = wgValue(sections[0], 'PrivateKey');
    if (privateKey && isWireguardKey(privateKey)) byPublicKey.set(publicKeyOf(privateKey), file);
    for (const peer of sections.slice(1)) assert.ok(wgValue(peer, 'PublicKey'), `${file} peer without PublicKey`);
    parsed++;
  }
  assert.ok(parsed >= 10);
  // In the "simple client to server" pair, the server's peer key is the client's derived public key.
  const server = parseWgQuick(readFileSync(join(dir, 'pirate-example-simple-client-to-server_server-wg0.conf'), 'utf8'));
  const client = parseWgQuick(readFileSync(join(dir, 'pirate-example-simple-client-to-server_client-wg0.conf'), 'utf8'));
  assert.equal(wgValue(server[1], 'PublicKey'), publicKeyOf(wgValue(client[0], 'PrivateKey')!));
});

test('tunnel create → read → update → delete; private key never returned; interface names assigned', async () => {
  const created = await t.request('POST', '/api/v1/vpn/wg', { name: 'office', listen_port: 51820, address: '10.8.0.1/24', dns: '10.8.0.1' });
  assert.equal(created.statusCode, 201, created.body);
  const tunnel = json(created);
  assert.equal(tunnel.interface, 'wg0');
  assert.equal(tunnel.status, 'down');
  assert.ok(isWireguardKey(tunnel.public_key));
  assert.equal(tunnel.private_key, undefined);
  const stored = t.app.context.store.get('wg_tunnel', tunnel.id)!;
  assert.equal(publicKeyOf(t.app.context.models.get('wg_tunnel').secret(stored, 'private_key')!), tunnel.public_key);

  const supplied = generateKeyPair();
  const second = json(await t.request('POST', '/api/v1/vpn/wg', { name: 'lab', listen_port: 51821, address: '10.9.0.1/24', private_key: supplied.private_key }));
  assert.equal(second.interface, 'wg1');
  assert.equal(second.public_key, supplied.public_key, 'public key derived from the supplied private key');
  assert.ok(!JSON.stringify(second).includes(supplied.private_key));

  const read = await t.request('GET', `/api/v1/vpn/wg/${tunnel.id}`);
  assert.equal(json(read).name, 'office');
  assert.ok(!read.body.includes('private_key'));
  const list = await t.request('GET', '/api/v1/vpn/wg');
  assert.equal(list.headers['x-total-count'], '2');

  const updated = await t.request('PUT', `/api/v1/vpn/wg/${tunnel.id}`, { mtu: 1420, split_routes: ' 10.8.0.0/24, 192.168.10.0/24 ' });
  assert.equal(updated.statusCode, 200, updated.body);
  assert.equal(json(updated).mtu, 1420);
  assert.equal(json(updated).interface, 'wg0');
  assert.equal(json(updated).split_routes, '10.8.0.0/24, 192.168.10.0/24');

  const duplicatePort = await t.request('POST', '/api/v1/vpn/wg', { name: 'other', listen_port: 51820, address: '10.10.0.1/24' });
  assert.equal(duplicatePort.statusCode, 409);
  const badAddress = await t.request('POST', '/api/v1/vpn/wg', { name: 'bad', listen_port: 1000, address: 'nonsense' });
  assert.equal(badAddress.statusCode, 400);
  assert.match(json(badAddress).error, /address/);
  const badPort = await t.request('POST', '/api/v1/vpn/wg', { name: 'bad', listen_port: 0, address: '10.1.0.1/24' });
  assert.equal(badPort.statusCode, 400);
  assert.match(json(badPort).error, /listen_port/);
  const badKey = await t.request('POST', '/api/v1/vpn/wg', { name: 'bad', listen_port: 1001, address: '10.1.0.1/24', private_key: 'short' });
  assert.equal(badKey.statusCode, 400);

  assert.equal((await t.request('DELETE', `/api/v1/vpn/wg/${second.id}`)).statusCode, 204);
  assert.equal((await t.request('GET', `/api/v1/vpn/wg/${second.id}`)).statusCode, 404);
});

test('peers: next free address, auto keys, duplicate addresses, rendered config, QR code, and the tunnel in use', async () => {
  const tunnel = json(await t.request('POST', '/api/v1/vpn/wg', { name: 'peers', listen_port: 51900, address: '172.29.240.1/24', dns: '1.1.1.1', endpoint_host: 'vpn.example.org' }));
  assert.deepEqual(json(await t.request('GET', `/api/v1/vpn/wg/${tunnel.id}/peers/next-ip`)), { next_ip: '172.29.240.2/32' });

  const auto = await t.request('POST', `/api/v1/vpn/wg/${tunnel.id}/peers`, { allowed_ips: 'auto', auto_generate_key: true, name: 'phone', keepalive: 25, preshared_key: 'generate' });
  assert.equal(auto.statusCode, 201, auto.body);
  const phone = json(auto);
  assert.deepEqual(phone.allowed_ips, ['172.29.240.2/32']);
  assert.equal(phone.persistent_keepalive, 25);
  assert.equal(phone.has_client_private_key, true);
  assert.equal(phone.has_preshared_key, true);
  assert.equal(phone.client_private_key, undefined);
  assert.equal(phone.preshared_key, undefined);
  assert.deepEqual(json(await t.request('GET', `/api/v1/vpn/wg/${tunnel.id}/peers/next-ip`)), { next_ip: '172.29.240.3/32' });

  const laptopKeys = generateKeyPair();
  const laptop = json(await t.request('POST', `/api/v1/vpn/wg/${tunnel.id}/peers`, { allowed_ips: '172.29.240.7/32, fd00::7/128', public_key: laptopKeys.public_key }));
  assert.deepEqual(laptop.allowed_ips, ['172.29.240.7/32', 'fd00::7/128']);
  const clash = await t.request('POST', `/api/v1/vpn/wg/${tunnel.id}/peers`, { allowed_ips: '172.29.240.7/32', public_key: generateKeyPair().public_key });
  assert.equal(clash.statusCode, 409);
  const noKey = await t.request('POST', `/api/v1/vpn/wg/${tunnel.id}/peers`, { allowed_ips: '172.29.240.9/32' });
  assert.equal(noKey.statusCode, 400);
  assert.match(json(noKey).error, /public_key/);
  const badIp = await t.request('POST', `/api/v1/vpn/wg/${tunnel.id}/peers`, { allowed_ips: '172.29.240.300/32', public_key: generateKeyPair().public_key });
  assert.equal(badIp.statusCode, 400);

  const read = await t.request('GET', `/api/v1/vpn/wg/${tunnel.id}/peers/${phone.id}`);
  assert.equal(json(read).name, 'phone');
  const updated = json(await t.request('PUT', `/api/v1/vpn/wg/${tunnel.id}/peers/${laptop.id}`, { name: 'laptop', endpoint: '203.0.113.5:51820', keepalive: 0 }));
  assert.equal(updated.name, 'laptop');
  assert.equal(updated.endpoint, '203.0.113.5:51820');
  assert.equal(updated.persistent_keepalive, null);

  const config = json(await t.request('GET', `/api/v1/vpn/wg/${tunnel.id}/peers/${phone.id}/config?include_keys=true`));
  for (const [text, allowed] of [[config.full_tunnel, '0.0.0.0/0, ::/0'], [config.split_tunnel, '172.29.240.0/24']] as const) {
    const sections = parseWgQuick(text);
    assert.deepEqual(sections.map((s) => s.name), ['Interface', 'Peer']);
    const clientKey = wgValue(sections[0], 'PrivateKey')!;
    assert.ok(isWireguardKey(clientKey));
    assert.equal(publicKeyOf(clientKey), phone.public_key, 'the rendered private key belongs to the peer');
    assert.equal(wgValue(sections[0], 'Address'), '172.29.240.2/32');
    assert.equal(wgValue(sections[0], 'DNS'), '1.1.1.1');
    assert.equal(wgValue(sections[1], 'PublicKey'), tunnel.public_key);
    assert.ok(isWireguardKey(wgValue(sections[1], 'PresharedKey')!));
    assert.equal(wgValue(sections[1], 'Endpoint'), 'vpn.example.org:51900');
    assert.equal(wgValue(sections[1], 'AllowedIPs'), allowed);
    assert.equal(wgValue(sections[1], 'PersistentKeepalive'), '25');
  }
  const laptopConfig = json(await t.request('GET', `/api/v1/vpn/wg/${tunnel.id}/peers/${laptop.id}/config`));
  assert.match(laptopConfig.full_tunnel, /PrivateKey = <paste-your-private-key-here>/);
  const conf = await t.request('GET', `/api/v1/vpn/wg/${tunnel.id}/peers/${phone.id}/config?format=conf&variant=split&include_keys=true`);
  assert.equal(conf.body, config.split_tunnel);
  assert.match(String(conf.headers['content-disposition']), /attachment/);
  const qr = await t.request('GET', `/api/v1/vpn/wg/${tunnel.id}/peers/${phone.id}/config?format=qr`);
  assert.equal(qr.headers['content-type'], 'image/png');
  assert.deepEqual(qr.rawPayload.subarray(0, 8), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  assert.ok(qr.rawPayload.length > 500);

  // The peer list and records never carry key material.
  const list = await t.request('GET', `/api/v1/vpn/wg/${tunnel.id}/peers`);
  assert.equal(json(list).length, 2);
  assert.ok(!list.body.includes(wgValue(parseWgQuick(config.full_tunnel)[0], 'PrivateKey')!));

  const inUse = await t.request('DELETE', `/api/v1/vpn/wg/${tunnel.id}`);
  assert.equal(inUse.statusCode, 409);
  assert.match(json(inUse).error, /in use by WireGuard peer/);
  assert.equal((await t.request('DELETE', `/api/v1/vpn/wg/${tunnel.id}/peers/${laptop.id}`)).statusCode, 204);
  assert.equal((await t.request('DELETE', `/api/v1/vpn/wg/${tunnel.id}/peers/${phone.id}`)).statusCode, 204);
  assert.equal((await t.request('DELETE', `/api/v1/vpn/wg/${tunnel.id}`)).statusCode, 204);
});

test('start and stop change the live state through the platform, and the interface file is written 0600', async () => {
  const tunnel = json(await t.request('POST', '/api/v1/vpn/wg', { name: 'live', listen_port: 51950, address: '10.77.0.1/24' }));
  const peer = json(await t.request('POST', `/api/v1/vpn/wg/${tunnel.id}/peers`, { allowed_ips: '', auto_generate_key: true }));
  assert.deepEqual(json(await t.request('GET', `/api/v1/vpn/wg/${tunnel.id}/status`)), {
    running: false, interface: tunnel.interface, simulated: true, backend: 'simulated', pid: null, restarts: 0, last_error: null, peers: [],
  });
  const systemRules = async () => (json(await t.request('GET', '/api/v1/rules/system')) as string[]).filter((line) => line.includes('wireguard'));
  assert.deepEqual(await systemRules(), [], 'no WireGuard system rule while the tunnel is down');
  assert.deepEqual(json(await t.request('POST', `/api/v1/vpn/wg/${tunnel.id}/start`)), { message: 'Tunnel started' });
  assert.equal(json(await t.request('GET', `/api/v1/vpn/wg/${tunnel.id}`)).status, 'up');
  const status = json(await t.request('GET', `/api/v1/vpn/wg/${tunnel.id}/status`));
  assert.equal(status.running, true);
  assert.equal(status.peer_count, 1);
  assert.equal(status.peers[0].public_key, peer.public_key);
  assert.equal(status.peers[0].latest_handshake_secs_ago, -1);
  const file = join(t.dataDir, 'wireguard', `${tunnel.interface}.conf`);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const sections = parseWgQuick(readFileSync(file, 'utf8'));
  assert.equal(publicKeyOf(wgValue(sections[0], 'PrivateKey')!), tunnel.public_key);
  assert.equal(wgValue(sections[1], 'AllowedIPs'), '10.77.0.2/32');
  assert.deepEqual(await systemRules(), [`udp dport 51950 accept comment "system: wireguard ${tunnel.interface}"`]);
  // A peer added to the running tunnel is applied live; a deleted one leaves it.
  const second = json(await t.request('POST', `/api/v1/vpn/wg/${tunnel.id}/peers`, { allowed_ips: 'auto', auto_generate_key: true }));
  assert.deepEqual(json(await t.request('GET', `/api/v1/vpn/wg/${tunnel.id}/status`)).peers.map((p: { public_key: string }) => p.public_key), [peer.public_key, second.public_key]);
  assert.equal((await t.request('DELETE', `/api/v1/vpn/wg/${tunnel.id}/peers/${second.id}`)).statusCode, 204);
  assert.deepEqual(json(await t.request('GET', `/api/v1/vpn/wg/${tunnel.id}/status`)).peers.map((p: { public_key: string }) => p.public_key), [peer.public_key]);
  // The listen interface limits the system rule to it.
  assert.equal((await t.request('PUT', `/api/v1/vpn/wg/${tunnel.id}`, { listen_interface: 'eth9' })).statusCode, 200);
  assert.deepEqual(await systemRules(), [`iifname "eth9" udp dport 51950 accept comment "system: wireguard ${tunnel.interface}"`]);
  await t.request('POST', `/api/v1/vpn/wg/${tunnel.id}/stop`);
  assert.deepEqual(await systemRules(), [], 'the rule leaves with the tunnel');
  assert.equal(json(await t.request('GET', `/api/v1/vpn/wg/${tunnel.id}/status`)).running, false);
  assert.equal(json(await t.request('GET', `/api/v1/vpn/wg/${tunnel.id}`)).status, 'down');
});

test('`wg show dump` output is parsed into the status shape', () => {
  const dump = 'PRIV\tPUB\t51820\toff\npeerkey\t(none)\t198.51.100.2:4000\t10.0.0.2/32,fd00::2/128\t1700000000\t1234\t5678\t25\nother\t(none)\t(none)\t10.0.0.3/32\t0\t0\t0\toff\n';
  const status = parseWgDump('wg0', dump, 1700000100);
  assert.equal(status.listen_port, 51820);
  assert.deepEqual(status.peers[0], { public_key: 'peerkey', endpoint: '198.51.100.2:4000', allowed_ips: '10.0.0.2/32,fd00::2/128', latest_handshake_secs_ago: 100, transfer_rx: 1234, transfer_tx: 5678, persistent_keepalive: 25 });
  assert.equal(status.peers[1].latest_handshake_secs_ago, -1);
  assert.equal(status.peers[1].endpoint, null);
  assert.equal(status.peers[1].persistent_keepalive, null);
});

test('IPsec SAs: create with protocol aliases, update, validation, delete', async () => {
  const created = await t.request('POST', '/api/v1/vpn/ipsec', { name: 'branch', local_addr: '198.51.100.1', remote_addr: '203.0.113.0/24', protocol: 'ESP+AH', mode: 'tunnel' });
  assert.equal(created.statusCode, 201, created.body);
  const sa = json(created);
  assert.equal(sa.protocol, 'esp_ah');
  assert.equal(sa.src_addr, '198.51.100.1');
  assert.equal(sa.dst_addr, '203.0.113.0/24');
  assert.ok(sa.spi & 0x100);
  assert.equal(sa.enc_algo, 'aes-256-gcm');
  const updated = await t.request('PUT', `/api/v1/vpn/ipsec/${sa.id}`, { mode: 'transport', remote_addr: '203.0.113.9' });
  assert.equal(json(updated).mode, 'transport');
  assert.equal(json(updated).spi, sa.spi);
  assert.equal((await t.request('POST', '/api/v1/vpn/ipsec', { name: 'x', local_addr: 'any', remote_addr: 'any', protocol: 'gre', mode: 'tunnel' })).statusCode, 400);
  const badAddress = await t.request('POST', '/api/v1/vpn/ipsec', { name: 'y', local_addr: 'not an ip', remote_addr: 'any', protocol: 'esp', mode: 'tunnel' });
  assert.equal(badAddress.statusCode, 400);
  assert.match(json(badAddress).error, /local_addr/);
  assert.equal((await t.request('POST', '/api/v1/vpn/ipsec', { name: 'branch', local_addr: 'any', remote_addr: 'any', protocol: 'esp', mode: 'tunnel' })).statusCode, 409);
  assert.equal((await t.request('DELETE', `/api/v1/vpn/ipsec/${sa.id}`)).statusCode, 204);
  assert.equal(json(await t.request('GET', '/api/v1/vpn/ipsec')).length, 0);
});

test('IPsec SA credentials and selectors: checked on write, kept by a partial PUT, rendered into swanctl.conf with the key encoded and never returned', async () => {
  const psk = 'a "quoted" key }\n'.trim() + ' padding';
  const body = { name: 'hq', local_addr: '198.51.100.1', remote_addr: '203.0.113.9', protocol: 'esp', mode: 'tunnel', psk, local_id: 'gw.example.org', remote_id: 'CN=hq, O=Example', local_ts: '10.1.0.0/16, 10.2.0.0/16', remote_ts: ['10.9.0.0/24'] };
  const created = await t.request('POST', '/api/v1/vpn/ipsec', body);
  assert.equal(created.statusCode, 201, created.body);
  const sa = json(created);
  assert.equal(sa.has_psk, true);
  assert.ok(!created.body.includes('quoted'), 'the pre-shared key is never returned');
  assert.deepEqual([sa.local_ts, sa.remote_ts, sa.auth_method, sa.ike_proposals, sa.esp_proposals, sa.start_action], [['10.1.0.0/16', '10.2.0.0/16'], ['10.9.0.0/24'], 'psk', 'aes256-sha256-modp2048', 'aes256gcm16', 'trap']);
  const updated = json(await t.request('PUT', `/api/v1/vpn/ipsec/${sa.id}`, { start_action: 'start', esp_proposals: 'aes128-sha256-modp3072, aes256gcm16' }));
  assert.deepEqual([updated.local_id, updated.remote_id, updated.auth_method, updated.ike_proposals, updated.start_action], ['gw.example.org', 'CN=hq, O=Example', 'psk', 'aes256-sha256-modp2048', 'start'], 'a partial PUT keeps the other fields');
  assert.deepEqual([updated.enc_algo, updated.auth_algo], ['aes-128-cbc', 'hmac-sha256'], 'display algorithms follow the proposals');

  const conf = readFileSync(join(t.dataDir, 'ipsec', 'swanctl', 'swanctl.conf'), 'utf8');
  assert.equal(statSync(join(t.dataDir, 'ipsec', 'swanctl', 'swanctl.conf')).mode & 0o777, 0o600);
  assert.match(conf, new RegExp(`bulwark-${sa.id} \\{`));
  assert.match(conf, /local_ts = "10\.1\.0\.0\/16","10\.2\.0\.0\/16"/);
  assert.match(conf, /remote \{\n {6}auth = psk\n {6}id = "CN=hq, O=Example"/);
  assert.match(conf, /esp_proposals = "aes128-sha256-modp3072,aes256gcm16"/);
  assert.match(conf, /start_action = start/);
  assert.ok(conf.includes(`secret = "0s${Buffer.from(psk).toString('base64')}"`), 'the key is written base64-encoded, never as text');
  assert.ok(!conf.includes('quoted'));

  const refusals: [Record<string, unknown>, RegExp][] = [
    [{ ike_proposals: 'aes256-sha256' }, /^body\.ike_proposals: "aes256-sha256" names no key exchange/],
    [{ esp_proposals: 'aes256-md4' }, /^body\.esp_proposals: "md4" is not a strongSwan algorithm name/],
    [{ ah_proposals: 'aes256' }, /^body\.ah_proposals/],
    [{ local_ts: '10.0.0.0/33' }, /^body\.local_ts: "10\.0\.0\.0\/33" is not a CIDR/],
    [{ remote_id: 'x" }\nconnections {' }, /^body\.remote_id/],
    [{ local_addr: '<servers>' }, /^body\.local_addr/],
    [{ psk: 'short' }, /^body\.psk/],
    [{ auth_method: 'cert' }, /^body\.certificate_id is required/],
    [{ auth_method: 'cert', certificate_id: '00000000-0000-4000-8000-000000000000' }, /^body\.certificate_id: .*does not exist/],
    [{ remote_addr: '203.0.113.0/24' }, /^body\.start_action: start needs remote_addr to be one address/],
  ];
  for (const [patch, message] of refusals) {
    const response = await t.request('PUT', `/api/v1/vpn/ipsec/${sa.id}`, patch);
    assert.equal(response.statusCode, 400, `${JSON.stringify(patch)} → ${response.body}`);
    assert.match(json(response).error, message, JSON.stringify(patch));
  }
  assert.equal(readFileSync(join(t.dataDir, 'ipsec', 'swanctl', 'swanctl.conf'), 'utf8'), conf, 'a refused change renders nothing');
  const status = json(await t.request('GET', '/api/v1/vpn/ipsec/status'));
  assert.deepEqual([status.simulated, status.sas.map((s: { id: string; status: string; not_loaded: string | null }) => [s.id, s.status, s.not_loaded])], [true, [[sa.id, 'down', null]]]);
  assert.equal((await t.request('DELETE', `/api/v1/vpn/ipsec/${sa.id}`)).statusCode, 204);
});

test('starting and stopping a tunnel re-loads the applied ruleset with its system rule, without applying pending rule changes', async () => {
  const filter = t.app.context.platform.packetFilter as unknown as { appliedText?: string };
  assert.equal((await t.request('POST', '/api/v1/reload')).statusCode, 200);
  const pendingRule = json(await t.request('POST', '/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: 2323, label: 'pending-only' }));
  const tunnel = json(await t.request('POST', '/api/v1/vpn/wg', { name: 'filtered', listen_port: 51960, address: '10.78.0.1/24', listen_interface: 'wan0' }));
  assert.ok(!filter.appliedText!.includes('51960'));
  assert.equal((await t.request('POST', `/api/v1/vpn/wg/${tunnel.id}/start`)).statusCode, 200);
  assert.ok(filter.appliedText!.includes(`iifname "wan0" udp dport 51960 accept comment "system: wireguard ${tunnel.interface}"`), 'loaded at start, no reload needed');
  assert.ok(!filter.appliedText!.includes(pendingRule.id), 'the pending rule was not applied with it');
  assert.equal((await t.request('POST', `/api/v1/vpn/wg/${tunnel.id}/stop`)).statusCode, 200);
  assert.ok(!filter.appliedText!.includes('51960'), 'and gone at stop');
  assert.equal((await t.request('DELETE', `/api/v1/rules/${pendingRule.id}`)).statusCode, 204);
  assert.equal((await t.request('DELETE', `/api/v1/vpn/wg/${tunnel.id}`)).statusCode, 204);
});

test('a change the running daemon or tunnel refuses is not kept: 409, and the stored configuration stays the one in force', async () => {
  const { platform } = t.app.context;
  const refuse = async () => {
    throw new HttpError(409, 'strongSwan refused the IPsec configuration: test');
  };
  const sa = json(await t.request('POST', '/api/v1/vpn/ipsec', { name: 'kept', local_addr: '198.51.100.1', remote_addr: '203.0.113.9', protocol: 'esp', mode: 'tunnel', psk: 'kept-shared-key-000001', remote_id: 'a.example.org' }));
  const apply = platform.ipsec.apply;
  platform.ipsec.apply = refuse;
  try {
    const changed = await t.request('PUT', `/api/v1/vpn/ipsec/${sa.id}`, { remote_id: 'b.example.org' });
    assert.equal(changed.statusCode, 409);
    assert.equal(json(changed).error, 'strongSwan refused the IPsec configuration: test; the change was not kept');
    assert.equal(json(await t.request('GET', `/api/v1/vpn/ipsec/${sa.id}`)).remote_id, 'a.example.org');
    assert.equal((await t.request('POST', '/api/v1/vpn/ipsec', { name: 'not-kept', local_addr: 'any', remote_addr: 'any', protocol: 'esp', mode: 'tunnel', psk: 'kept-shared-key-000002' })).statusCode, 409);
    assert.deepEqual(json(await t.request('GET', '/api/v1/vpn/ipsec')).map((s: { name: string }) => s.name), ['kept']);
  } finally {
    platform.ipsec.apply = apply;
  }
  assert.equal((await t.request('DELETE', `/api/v1/vpn/ipsec/${sa.id}`)).statusCode, 204);

  const tunnel = json(await t.request('POST', '/api/v1/vpn/wg', { name: 'kept-wg', listen_port: 51970, address: '10.79.0.1/24' }));
  const peer = json(await t.request('POST', `/api/v1/vpn/wg/${tunnel.id}/peers`, { allowed_ips: 'auto', auto_generate_key: true }));
  assert.equal((await t.request('POST', `/api/v1/vpn/wg/${tunnel.id}/start`)).statusCode, 200);
  const syncPeers = platform.wireguard.syncPeers;
  platform.wireguard.syncPeers = refuse;
  try {
    assert.equal((await t.request('POST', `/api/v1/vpn/wg/${tunnel.id}/peers`, { allowed_ips: 'auto', auto_generate_key: true })).statusCode, 409);
    assert.equal((await t.request('PUT', `/api/v1/vpn/wg/${tunnel.id}/peers/${peer.id}`, { allowed_ips: '10.79.0.9/32' })).statusCode, 409);
    const peers = json(await t.request('GET', `/api/v1/vpn/wg/${tunnel.id}/peers`));
    assert.deepEqual(peers.map((p: { id: string; allowed_ips: string[] }) => [p.id, p.allowed_ips]), [[peer.id, ['10.79.0.2/32']]]);
  } finally {
    platform.wireguard.syncPeers = syncPeers;
  }
  await t.request('POST', `/api/v1/vpn/wg/${tunnel.id}/stop`);
  assert.equal((await t.request('DELETE', `/api/v1/vpn/wg/${tunnel.id}/peers/${peer.id}`)).statusCode, 204);
  assert.equal((await t.request('DELETE', `/api/v1/vpn/wg/${tunnel.id}`)).statusCode, 204);
});
