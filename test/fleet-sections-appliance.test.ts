/**
 * The sections a template may own beyond the packet filter (DNS resolver, ACLs, blocklist sources, allow-list and
 * custom blocks; DHCP with DDNS, time, syslog, IPsec, WireGuard peers) and
 * rules placed as a block, proven on a real appliance (simulated platform, in-process): the agent's applier writes each revision
 * through the appliance's API with the agent's own key, the objects read back, the daemons' configurations are
 * rendered from them, local edits are drift (a secret's value never in it), and the next revision overwrites them.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApplianceApplier } from '../src/agent/appliance-applier.js';
import { FLEET_AGENT_PERMISSIONS } from '../src/core/permissions.js';
import { newSealingKeyPair, openDocument, sealFor } from '../src/agent/sealed-secrets.js';
import { generateKeyPair, generatePresharedKey } from '../src/areas/vpn/wireguard.js';
import type { SectionObjects } from '../src/agent/state.js';
import { json } from './helpers/app.js';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';

const APPLIANCE_ID = 'branch-7';
const sealing = newSealingKeyPair();
const seal = (name: string, value: string) => sealFor(sealing.publicKeyPem, APPLIANCE_ID, name, value);
/** What the agent does with a revision before the applier sees it: sealed secrets opened for the write. */
const opened = (document: SectionObjects) => openDocument(document, sealing.privateKeyPem, APPLIANCE_ID);

const PSK_1 = 'fleet-psk-one-0123456789';
const PSK_2 = 'fleet-psk-two-9876543210';
const HQ_PEER = generateKeyPair().public_key;
const WG_PSK = [generatePresharedKey(), generatePresharedKey()];

let t: AreaApp;
let applier: ApplianceApplier;
let collector: Socket;
const received: string[] = [];

before(async () => {
  t = await startAreaApp();
  const key = await t.request('POST', '/api/v1/auth/api-keys', { name: 'fleet-agent', permissions: FLEET_AGENT_PERMISSIONS });
  assert.equal(key.statusCode, 201, key.body);
  applier = new ApplianceApplier(t.app, () => json(key).key as string);
  collector = createSocket('udp4');
  collector.on('message', (message) => received.push(message.toString()));
  await new Promise<void>((resolve) => collector.bind(0, '127.0.0.1', resolve));
});
after(async () => {
  collector?.close();
  await t?.close();
});

const get = async (url: string) => {
  const response = await t.request('GET', url);
  assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
  return json(response);
};
const write = async (method: 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) => {
  const response = await t.request(method, url, payload);
  assert.ok(response.statusCode < 300, `${method} ${url}: ${response.statusCode} ${response.body}`);
  return response.body ? json(response) : null;
};
const labels = async () => (await get('/api/v1/rules')).map((rule: { label: string }) => rule.label);

function revision(psk: string, wgPsk: string): SectionObjects {
  return {
    rule_placement: 'first',
    sections: {
      rules: [
        { label: 'fleet-web', action: 'pass', direction: 'in', interface: 'lan', protocol: 'tcp', rule_match: { src_addr: 'any', src_port: null, dst_addr: '10.7.0.80', dst_port: { start: 443, end: 443 } } },
        { label: 'fleet-block-telnet', action: 'block', direction: 'in', interface: 'lan', protocol: 'tcp', rule_match: { src_addr: 'any', src_port: null, dst_addr: 'any', dst_port: { start: 23, end: 23 } } },
      ],
      dhcp_settings: [{ enabled: true, interfaces: ['eth1'], domain_name: 'branch7.example' }],
      dhcp_subnets: [{ network: '192.168.70.0/24', pool_start: '192.168.70.100', pool_end: '192.168.70.199', gateway: '192.168.70.1', options: [{ code: 252, value_type: 'string', value: 'http://wpad.branch7/wpad.dat' }] }],
      // Spelled as the client's label reads: the appliance's reservation of that client is the same one in any spelling.
      dhcp_reservations: [{ mac_address: '02-00-00-00-07-0A', ip_address: '192.168.70.10', hostname: 'printer' }],
      time_settings: [{ enabled: true, ntp_listen: '127.0.0.1:10123' }],
      time_sources: [{ address: 'NTP1.example.net', nts: false, enabled: true }],
      syslog: [{ enabled: true, host: '127.0.0.1', port: collector.address().port, transport: 'udp', allowed_addresses: ['127.0.0.1/32'] }],
      ipsec: [{ name: 'hq', local_addr: '198.51.100.7', remote_addr: '203.0.113.1', protocol: 'esp', mode: 'tunnel', local_ts: ['192.168.70.0/24'], remote_ts: ['10.0.0.0/16'], psk: seal('hq_psk', psk) }],
      // A peer of the appliance's own tunnel (its key pair is the appliance's), named by the tunnel's name and its key.
      wg_peers: [{ tunnel: 'site-vpn', public_key: HQ_PEER, name: 'hq', allowed_ips: ['10.8.0.2/32'], endpoint: 'hq.example.net:51820', persistent_keepalive: 25, preshared_key: seal('hq_wg', wgPsk) }],
    },
  };
}

test('DHCP, time, syslog, IPsec and WireGuard peer sections and a rule block: applied through the API and rendered; local edits are drift without the secret; the next revision overwrites them', { timeout: 240_000 }, async () => {
  await write('POST', '/api/v1/rules', { label: 'local-ssh', action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: 22 });
  const tunnel = await write('POST', '/api/v1/vpn/wg', { name: 'site-vpn', listen_port: 51820, address: '10.8.0.1/24' });
  await write('POST', `/api/v1/vpn/wg/${tunnel.id}/start`);
  const first = revision(PSK_1, WG_PSK[0]);
  assert.deepEqual(await applier.apply(opened(first), null), { outcome: 'applied', reason: null });

  // Read back through the API: the block before the appliance's own rule, in the template's order.
  assert.deepEqual(await labels(), ['fleet-web', 'fleet-block-telnet', 'local-ssh']);
  const reservation = (await get('/api/v1/dhcp/v4/reservations')).find((r: { hostname: string }) => r.hostname === 'printer');
  assert.equal(reservation.ip_address, '192.168.70.10');
  const sa = (await get('/api/v1/vpn/ipsec')).find((s: { name: string }) => s.name === 'hq');
  assert.equal(sa.has_psk, true);
  assert.ok(!JSON.stringify(sa).includes(PSK_1), 'the pre-shared key is never answered');
  // Rendered for the daemons (simulated platform: the files are written and checked, nothing is sent to the host).
  const kea = JSON.parse(readFileSync(join(t.dataDir, 'dhcp', 'kea-dhcp4.conf'), 'utf8'));
  assert.equal(kea.Dhcp4.subnet4[0].subnet, '192.168.70.0/24');
  assert.deepEqual(kea.Dhcp4.subnet4[0].reservations.map((r: Record<string, string>) => [r['ip-address'], r.hostname]), [['192.168.70.10', 'printer']]);
  assert.ok(JSON.stringify(kea.Dhcp4['option-data']).includes('branch7.example'), 'the global domain name from dhcp_settings');
  assert.match(readFileSync(join(t.dataDir, 'time', 'chrony.conf'), 'utf8'), /^server NTP1\.example\.net .*/m);
  const swanctl = () => readFileSync(join(t.dataDir, 'ipsec', 'swanctl', 'swanctl.conf'), 'utf8');
  assert.ok(swanctl().includes(`secret = "0s${Buffer.from(PSK_1).toString('base64')}"`));
  await write('POST', '/api/v1/settings/syslog/test');
  const deadline = Date.now() + 30_000;
  while (!received.some((line) => line.includes('Bulwark syslog test message')) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  assert.ok(received.some((line) => line.includes('Bulwark syslog test message')), 'the syslog target from the template receives');
  // The running interface (simulated) holds the peer, and the appliance its preshared key (shown only with include_keys).
  const peers = async () => (await get(`/api/v1/vpn/wg/${tunnel.id}/status`)).peers;
  assert.deepEqual((await peers()).map((p: Record<string, unknown>) => [p.public_key, p.allowed_ips, p.endpoint, p.persistent_keepalive]), [[HQ_PEER, '10.8.0.2/32', 'hq.example.net:51820', 25]]);
  const peer = (await get(`/api/v1/vpn/wg/${tunnel.id}/peers`))[0];
  assert.equal(peer.has_preshared_key, true);
  const clientFile = async () => JSON.stringify(await get(`/api/v1/vpn/wg/${tunnel.id}/peers/${peer.id}/config?include_keys=true`));
  assert.ok((await clientFile()).includes(WG_PSK[0]));
  assert.deepEqual(await applier.drift(opened(first)), [], 'in sync right after the apply');

  // Local edits by an administrator.
  const ids = (await get('/api/v1/rules')).map((rule: { id: string }) => rule.id);
  await write('PUT', '/api/v1/rules/reorder', { rule_ids: [ids[2], ids[0], ids[1]] });
  await write('PUT', `/api/v1/dhcp/v4/reservations/${reservation.id}`, { hostname: 'printer-local' });
  await write('PUT', `/api/v1/vpn/ipsec/${sa.id}`, { remote_addr: '203.0.113.99', psk: 'a-local-psk-nobody-reads' });
  await write('PUT', '/api/v1/settings/syslog', { port: 5514 });
  await write('PUT', `/api/v1/vpn/wg/${tunnel.id}/peers/${peer.id}`, { allowed_ips: '10.8.0.3/32', preshared_key: '' });
  const source = (await get('/api/v1/time/sources')).find((s: { address: string }) => s.address === 'NTP1.example.net');
  await write('DELETE', `/api/v1/time/sources/${source.id}`);
  const drift = await applier.drift(opened(first));
  assert.deepEqual(drift.map((d) => [d.section, d.name, d.kind, d.fields, d.values]), [
    ['dhcp_reservations', '02:00:00:00:07:0a', 'changed', ['hostname'], { hostname: 'printer-local' }],
    ['time_sources', 'ntp1.example.net', 'missing', [], undefined],
    ['syslog', 'syslog', 'changed', ['port'], { port: 5514 }],
    ['ipsec', 'hq', 'changed', ['remote_addr'], { remote_addr: '203.0.113.99' }],
    ['wg_peers', `site-vpn/${HQ_PEER}`, 'changed', ['allowed_ips', 'preshared_key'], { allowed_ips: ['10.8.0.3/32'] }],
    ['rules', 'fleet-web', 'moved', [], undefined],
  ]);
  assert.ok(!/a-local-psk|fleet-psk/.test(JSON.stringify(drift)) && !JSON.stringify(drift).includes(WG_PSK[0]), 'no secret in the drift');

  // The next revision (its secret rotated) puts the template's back, every edit at once.
  const second = revision(PSK_2, WG_PSK[1]);
  assert.deepEqual(await applier.apply(opened(second), opened(first)), { outcome: 'applied', reason: null });
  assert.deepEqual(await labels(), ['fleet-web', 'fleet-block-telnet', 'local-ssh']);
  assert.equal((await get('/api/v1/dhcp/v4/reservations')).find((r: { id: string }) => r.id === reservation.id).hostname, 'printer');
  assert.equal((await get('/api/v1/settings/syslog')).port, collector.address().port);
  assert.ok((await get('/api/v1/time/sources')).some((s: { address: string }) => s.address === 'NTP1.example.net'));
  assert.ok(swanctl().includes(`secret = "0s${Buffer.from(PSK_2).toString('base64')}"`), 'the rotated secret reaches charon\'s file');
  assert.match(swanctl(), /remote_addrs = "203\.0\.113\.1"/);
  assert.deepEqual((await peers()).map((p: Record<string, unknown>) => p.allowed_ips), ['10.8.0.2/32']);
  assert.ok((await clientFile()).includes(WG_PSK[1]), 'the rotated preshared key');
  assert.deepEqual(await applier.drift(opened(second)), []);

  // A section the next revision no longer owns: its objects go; a settings section keeps its values, no longer owned.
  const { dhcp_reservations: _r, syslog: _s, ...rest } = second.sections;
  assert.deepEqual(await applier.apply(opened({ ...second, sections: rest }), opened(second)), { outcome: 'applied', reason: null });
  assert.equal((await get('/api/v1/dhcp/v4/reservations')).length, 0);
  assert.equal((await get('/api/v1/settings/syslog')).enabled, true);
});

test('DNS resolver settings, ACLs and blocklist sources: applied, read back and rendered for Unbound; local edits are drift; the next revision restores them; a built-in source is never deleted', { timeout: 120_000 }, async () => {
  await write('POST', '/api/v1/dns/resolver/acls', { network: '172.16.0.0/12', action: 'allow', description: 'the appliance\'s own' });
  // A source the appliance seeds itself (off): the template turns it on, by its name in another case.
  const builtIn = (await get('/api/v1/dns/blocklists')).find((s: { built_in: boolean }) => s.built_in);
  assert.ok(builtIn, 'the appliance seeds built-in blocklist sources');
  const dnsRevision = (port: number): SectionObjects => ({
    sections: {
      dns_resolver: [{ enabled: true, listen_interfaces: ['127.0.0.1'], port, dnssec: false, forwarding_servers: ['192.0.2.53'] }],
      dns_acls: [{ network: '192.168.70.0/24', action: 'allow' }, { network: '198.51.100.0/24', action: 'refuse' }],
      dns_blocklists: [
        { name: String(builtIn.name).toUpperCase(), enabled: true },
        { name: 'Fleet malware', category: 'malware', url: 'https://lists.example.net/malware.txt', format: 'domains', enabled: true, action: 'nxdomain' },
      ],
    },
  });
  const first = dnsRevision(10553);
  assert.deepEqual(await applier.apply(first, null), { outcome: 'applied', reason: null });
  const resolver = async () => get('/api/v1/dns/resolver/config');
  assert.deepEqual(((r) => [r.enabled, r.port, r.forwarding_servers])(await resolver()), [true, 10553, ['192.0.2.53']]);
  const acls = async () => (await get('/api/v1/dns/resolver/acls')).map((a: Record<string, string>) => `${a.network} ${a.action}`).sort();
  assert.deepEqual(await acls(), ['172.16.0.0/12 allow', '192.168.70.0/24 allow', '198.51.100.0/24 refuse']);
  const sources = async () => get('/api/v1/dns/blocklists');
  const fleetSource = (await sources()).find((s: { name: string }) => s.name === 'Fleet malware');
  assert.equal(fleetSource.url, 'https://lists.example.net/malware.txt');
  assert.equal((await sources()).find((s: { id: string }) => s.id === builtIn.id).enabled, true);
  // Rendered for Unbound (simulated platform: written and checked, nothing sent to the host).
  const unbound = () => readFileSync(join(t.dataDir, 'dns', 'unbound.conf'), 'utf8');
  assert.match(unbound(), /^\s+port: 10553$/m);
  assert.match(unbound(), /^\s+access-control: 198\.51\.100\.0\/24 refuse$/m);
  assert.match(unbound(), /^\s+access-control: 172\.16\.0\.0\/12 allow$/m, 'the appliance\'s own ACL stays');
  assert.deepEqual(await applier.drift(first), [], 'in sync right after the apply');

  // Local edits by an administrator.
  await write('PUT', '/api/v1/dns/resolver/config', { port: 10554 });
  const refused = (await get('/api/v1/dns/resolver/acls')).find((a: { network: string }) => a.network === '198.51.100.0/24');
  await write('PUT', `/api/v1/dns/resolver/acls/${refused.id}`, { action: 'allow' });
  await write('DELETE', `/api/v1/dns/blocklists/${fleetSource.id}`);
  await write('PUT', `/api/v1/dns/blocklists/${builtIn.id}`, { enabled: false });
  assert.deepEqual((await applier.drift(first)).map((d) => [d.section, d.name, d.kind, d.fields, d.values]), [
    ['dns_resolver', 'dns_resolver', 'changed', ['port'], { port: 10554 }],
    ['dns_acls', '198.51.100.0/24', 'changed', ['action'], { action: 'allow' }],
    ['dns_blocklists', String(builtIn.name).toLowerCase(), 'changed', ['enabled'], { enabled: false }],
    ['dns_blocklists', 'fleet malware', 'missing', [], undefined],
  ]);

  // The next revision puts them back and Unbound's file follows.
  const second = dnsRevision(10553);
  assert.deepEqual(await applier.apply(second, first), { outcome: 'applied', reason: null });
  assert.equal((await resolver()).port, 10553);
  assert.match(unbound(), /^\s+port: 10553$/m);
  assert.match(unbound(), /^\s+access-control: 198\.51\.100\.0\/24 refuse$/m);
  assert.ok((await sources()).some((s: { name: string }) => s.name === 'Fleet malware'));
  assert.deepEqual(await applier.drift(second), []);

  // No longer owned: the template's ACLs and source go, the built-in source stays (only the appliance may delete it).
  assert.deepEqual(await applier.apply({ sections: { dns_resolver: second.sections.dns_resolver } }, second), { outcome: 'applied', reason: null });
  assert.deepEqual(await acls(), ['172.16.0.0/12 allow']);
  assert.deepEqual((await sources()).filter((s: { name: string; id: string }) => s.name === 'Fleet malware' || s.id === builtIn.id).map((s: { id: string }) => s.id), [builtIn.id]);
});

test('DHCP DDNS with its sealed TSIG secret: applied through a change set and rendered for kea-dhcp-ddns; a local edit (the secret cleared) is drift without it; the next revision restores and rotates it', { timeout: 120_000 }, async () => {
  const secrets = [randomBytes(32).toString('base64'), randomBytes(32).toString('base64')];
  const ddnsRevision = (secret: string): SectionObjects => ({
    sections: {
      dhcp_settings: [{ enabled: true, interfaces: ['eth1'] }],
      dhcp_ddns: [{ enabled: true, forward_zone: 'branch7.example', dns_server: '192.0.2.53', tsig_key: 'branch7-key', tsig_algorithm: 'hmac-sha256', ttl: 300, tsig_secret: seal('ddns_tsig', secret) }],
    },
  });
  // The route's own checks hold in the change set, naming the operation's field; nothing is changed.
  const refused = await applier.apply({ sections: { dhcp_ddns: [{ enabled: true, forward_zone: '' }] } }, null);
  assert.equal(refused.outcome, 'failed');
  assert.match(String(refused.reason), /operations\.0\.body\.forward_zone is required when enabled; nothing was changed/);
  assert.equal((await get('/api/v1/dhcp/ddns')).enabled, false);
  const first = ddnsRevision(secrets[0]);
  assert.deepEqual(await applier.apply(opened(first), null), { outcome: 'applied', reason: null });
  const ddns = await get('/api/v1/dhcp/ddns');
  assert.deepEqual([ddns.enabled, ddns.forward_zone, ddns.tsig_key, ddns.tsig_secret_set], [true, 'branch7.example', 'branch7-key', true]);
  assert.ok(!JSON.stringify(ddns).includes(secrets[0]), 'the TSIG secret is never answered');
  // Rendered for kea-dhcp-ddns (simulated platform: written and checked), the secret in the key.
  const keaDdns = () => JSON.parse(readFileSync(join(t.dataDir, 'dhcp', 'kea-dhcp-ddns.conf'), 'utf8'))['DhcpDdns'];
  assert.deepEqual(keaDdns()['tsig-keys'].map((k: Record<string, string>) => [k.name, k.secret]), [['branch7-key', secrets[0]]]);
  assert.deepEqual(await applier.drift(opened(first)), [], 'in sync right after the apply');

  // A patch: the fields not sent keep their values (the route once reset them to their defaults).
  await write('PUT', '/api/v1/dhcp/ddns', { ttl: 600, tsig_secret: '' });
  const drift = await applier.drift(opened(first));
  assert.deepEqual(drift.map((d) => [d.section, d.name, d.kind, d.fields, d.values]), [['dhcp_ddns', 'dhcp_ddns', 'changed', ['ttl', 'tsig_secret'], { ttl: 600 }]]);
  assert.ok(!JSON.stringify(drift).includes(secrets[0]), 'no secret in the drift');

  const second = ddnsRevision(secrets[1]);
  assert.deepEqual(await applier.apply(opened(second), opened(first)), { outcome: 'applied', reason: null });
  assert.deepEqual(((d) => [d.ttl, d.tsig_secret_set])(await get('/api/v1/dhcp/ddns')), [300, true]);
  assert.deepEqual(keaDdns()['tsig-keys'].map((k: Record<string, string>) => k.secret), [secrets[1]], 'the rotated secret reaches the file');
  assert.deepEqual(await applier.drift(opened(second)), []);
});

test('the DNS allow-list and custom blocks: created through the change set and rendered into the running resolver\'s filter; an entry changed locally is replaced (its routes have no update)', { timeout: 120_000 }, async () => {
  const listRevision: SectionObjects = {
    sections: {
      dns_resolver: [{ enabled: true, listen_interfaces: ['127.0.0.1'], port: 10553 }],
      dns_whitelist: [{ pattern: 'partner.example.com', note: 'fleet' }],
      dns_customblocks: [{ pattern: '*.tracker.example.net', note: 'fleet' }],
    },
  };
  assert.deepEqual(await applier.apply(listRevision, null), { outcome: 'applied', reason: null });
  /** The blocklist filter's data file of the installed unbound.conf (src/render/unbound/unbound-blocklist.ts); none when nothing is blocked. */
  const filterData = () => {
    const script = /python-script: "([^"]+)"/.exec(readFileSync(join(t.dataDir, 'dns', 'unbound.conf'), 'utf8'))?.[1];
    if (!script) return '';
    return readFileSync(/^DATA_FILE = '([^']+)'$/m.exec(readFileSync(script, 'utf8'))![1], 'utf8');
  };
  assert.match(filterData(), /^allow\tpartner\.example\.com$/m);
  assert.match(filterData(), /^0\ttracker\.example\.net$/m);
  const allowed = async () => (await get('/api/v1/dns/whitelist')).filter((e: { pattern: string }) => e.pattern === 'partner.example.com');
  assert.deepEqual(await applier.drift(listRevision), []);

  // An administrator replaces the entry with a note of their own and deletes the block.
  await write('DELETE', `/api/v1/dns/whitelist/${(await allowed())[0].id}`);
  await write('POST', '/api/v1/dns/whitelist', { pattern: 'Partner.example.com', note: 'mine' });
  const block = (await get('/api/v1/dns/customblocks')).find((e: { pattern: string }) => e.pattern === '*.tracker.example.net');
  await write('DELETE', `/api/v1/dns/customblocks/${block.id}`);
  // The running resolver takes a list change at once (re-rendered after the write's answer: polled).
  const deadline = Date.now() + 30_000;
  while (/tracker\.example\.net/.test(filterData()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  assert.doesNotMatch(filterData(), /tracker\.example\.net/, 'the local delete reached the filter');
  assert.deepEqual((await applier.drift(listRevision)).map((d) => [d.section, d.name, d.kind, d.fields, d.values]), [
    ['dns_whitelist', 'partner.example.com', 'changed', ['note'], { note: 'mine' }],
    ['dns_customblocks', '*.tracker.example.net', 'missing', [], undefined],
  ]);
  assert.deepEqual(await applier.apply(listRevision, listRevision), { outcome: 'applied', reason: null });
  assert.deepEqual((await get('/api/v1/dns/whitelist')).filter((e: { pattern: string }) => e.pattern.toLowerCase() === 'partner.example.com').map((e: { pattern: string; note: string }) => [e.pattern, e.note]), [['partner.example.com', 'fleet']]);
  assert.match(filterData(), /^0\ttracker\.example\.net$/m);
  assert.deepEqual(await applier.drift(listRevision), []);
});
