import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { startTestApp, json, type TestApp } from './helpers/app.js';
import { adminHeaders, type Headers } from './helpers/auth.js';
import { lifecycleAreas, newProbe } from './helpers/config-area.js';
import { sharedFile } from './helpers/shared.js';

const opnsenseDir = sharedFile('fixtures/opnsense');
const pfsenseDir = sharedFile('fixtures/pfsense');

let t: TestApp;
let admin: Headers;
before(async () => {
  t = await startTestApp({ areas: lifecycleAreas(newProbe()) });
  admin = await adminHeaders(t.app);
});
after(() => t.close());

type Mapped = { kind: string; stored_as: string; source: string; data: Record<string, any>; notes: string[] };
type Skipped = { source: string; element: string; reason: string };

const preview = async (xml: string, extra: object = {}, on: { app: TestApp; headers: Headers } = { app: t, headers: admin }) => {
  const response = await on.app.app.inject({ method: 'POST', url: '/api/v1/config/preview-thirdparty', headers: on.headers, payload: { xml, ...extra } });
  assert.equal(response.statusCode, 200, response.body);
  return json(response) as { valid: boolean; kind: string; counts: Record<string, number>; objects: Mapped[]; skipped: Skipped[]; error: string | null; system: any; interfaces_found: string[] };
};
const importXml = (xml: string, on: { app: TestApp; headers: Headers } = { app: t, headers: admin }) =>
  on.app.app.inject({ method: 'POST', url: '/api/v1/config/import-thirdparty', headers: on.headers, payload: { xml } });
const read = (dir: { path: string }, name: string) => readFileSync(`${dir.path}/${name}`, 'utf8');
const stored = (kind: string) => t.app.context.store.list(`thirdparty.${kind}`);
const find = (objects: Mapped[], kind: string, predicate: (data: Record<string, any>) => boolean) => {
  const found = objects.filter((o) => o.kind === kind && predicate(o.data));
  assert.equal(found.length, 1, `one ${kind} expected, found ${found.length}`);
  return found[0];
};

for (const dir of [opnsenseDir, pfsenseDir]) {
  const files = dir.skip ? [] : readdirSync(dir.path).filter((f) => f.endsWith('.xml')).sort();
  for (const file of files) {
    test(`${file}: the preview maps or skips every element with a reason, and the import writes exactly what it listed, pending`, { skip: dir.skip }, async () => {
      const xml = read(dir, file);
      // a fresh appliance per file, so each import starts from an empty configuration
      const app = await startTestApp({ areas: lifecycleAreas(newProbe()) });
      const on = { app, headers: await adminHeaders(app.app) };
      try {
      const plan = await preview(xml, {}, on);
      assert.equal(plan.valid, true, plan.error ?? '');
      assert.equal(plan.kind, dir === opnsenseDir ? 'opnsense' : 'pfsense');
      assert.ok(plan.objects.length > 0, 'something is mapped from every fixture');
      for (const skipped of plan.skipped) assert.ok(skipped.reason.length > 5 && skipped.source.length > 0, JSON.stringify(skipped));
      const text = JSON.stringify(plan);
      assert.ok(!/\$2[aby]\$/.test(text), 'no bcrypt hash in the preview');
      for (const object of plan.objects) assert.equal(object.stored_as, `thirdparty.${object.kind}`);

      const before = app.app.context.store.snapshot().length;
      const response = await importXml(xml, on);
      assert.equal(response.statusCode, 200, response.body);
      const result = json(response);
      assert.equal(result.objects, plan.objects.length);
      assert.deepEqual(result.imported, plan.counts);
      assert.equal(result.pending, true, 'imported, not applied');
      assert.equal(app.app.context.store.snapshot().length, before + plan.objects.length);
      assert.ok(!JSON.stringify(app.app.context.store.snapshot()).match(/\$2[aby]\$/), 'no password hash stored');
      // importing the same file again creates no second alias, gateway, interface, tunnel or user
      const again = await preview(xml, {}, on);
      for (const kind of ['alias', 'gateway', 'interface', 'wg_tunnel', 'imported_user', 'vlan']) assert.equal(again.counts[kind], 0, kind);
      } finally {
        await app.close();
      }
    });
  }
}

test('aifw-medium (OPNsense): aliases, floating rules, keywords, port forward, outbound NAT, static route', { skip: opnsenseDir.skip }, async () => {
  const plan = await preview(read(opnsenseDir, 'aifw-medium.xml'));
  assert.deepEqual(plan.system, { hostname: 'fw1', domain: 'example.com', dns_servers: ['1.1.1.1', '9.9.9.9'], timezone: 'UTC' });
  assert.deepEqual(find(plan.objects, 'alias', (d) => d.name === 'my_servers').data.entries, ['10.0.0.5', '10.0.0.6']);
  const ssh = find(plan.objects, 'rule', (d) => d.description === 'SSH to firewall (IPv6)');
  assert.deepEqual({ ...ssh.data }, {
    action: 'pass', interface: 'lan', direction: 'in', ip_version: 'inet6', protocol: 'tcp',
    source: { address: 'any', port: null, invert: false }, destination: { address: '2001:db8::1', port: '22', invert: false },
    log: true, quick: true, enabled: true, description: 'SSH to firewall (IPv6)', gateway: null, floating: false,
  });
  const floating = plan.objects.filter((o) => o.kind === 'rule' && o.data.description === 'block floating bad nets');
  assert.deepEqual(floating.map((o) => o.data.interface), ['wan', 'lan'], 'one rule per interface of a floating rule');
  assert.ok(floating.every((o) => o.data.action === 'block' && o.data.source.address === 'blocked_nets'));
  assert.ok(plan.skipped.some((s) => s.element.includes('captive portal') && /lanip.*not in the file/.test(s.reason)));
  const forward = find(plan.objects, 'nat_port_forward', (d) => d.description === 'HTTPS forward');
  assert.equal(forward.data.redirect_address, '10.0.0.10');
  assert.equal(forward.data.redirect_port, '443');
  assert.equal(forward.data.destination.port, '443');
  assert.ok(forward.notes.some((n) => /wanip is dynamic/.test(n)));
  const outbound = find(plan.objects, 'nat_outbound', (d) => d.description === 'masq lan');
  assert.equal(outbound.data.source.address, '10.0.0.0/8');
  assert.equal(outbound.data.translation, 'interface');
  const route = find(plan.objects, 'route', (d) => d.network === '192.0.2.0/24');
  assert.equal(route.data.gateway_address, '1.2.3.1');
});

test('lightvik (OPNsense 26): MVC rules with interface networks, WireGuard with a sealed key, Kea reservation, Unbound host, VLANs', { skip: opnsenseDir.skip }, async () => {
  const xml = read(opnsenseDir, 'lightvik-golden-full-expected.xml');
  const plan = await preview(xml, { interface_map: { lan: 'eth1', wan: 'eth0' } });
  const block = find(plan.objects, 'rule', (d) => d.description === 'Block RFC1918 from DMZ');
  assert.equal(block.data.interface, 'eth1', 'interface_map applied');
  assert.equal(block.data.source.address, '10.0.0.0/24', 'opt1 resolved to its network');
  assert.equal(block.data.destination.address, 'RFC1918');
  assert.equal(block.data.log, true);
  assert.ok(plan.skipped.some((s) => s.element.includes('Default allow LAN IPv6') && /IPv6 network of lan/.test(s.reason)));
  const tunnel = find(plan.objects, 'wg_tunnel', (d) => d.name === 'wg0');
  assert.equal(tunnel.data.private_key, '**REDACTED**');
  assert.equal(tunnel.data.listen_port, 51820);
  assert.equal(tunnel.data.address, '10.0.0.1/24');
  assert.ok(plan.skipped.some((s) => s.element === 'peer peer1' && /not a WireGuard key/.test(s.reason)), 'the fixture peer key is 40 characters: refused, not imported broken');
  const reservation = find(plan.objects, 'dhcp_static_mapping', (d) => d.hostname === 'printer');
  assert.deepEqual({ ...reservation.data }, { subnet: '192.168.1.0/24', mac: 'aa:bb:cc:dd:ee:ff', ip_address: '192.168.1.10', hostname: 'printer', description: 'Office printer', server: 'kea' });
  const host = find(plan.objects, 'dns_host_override', (d) => d.hostname === 'nas');
  assert.equal(host.data.address, '192.168.1.20');
  assert.deepEqual(plan.objects.filter((o) => o.kind === 'vlan').map((o) => o.data.device), ['vtnet0.100', 'vtnet0.200']);
  assert.equal(find(plan.objects, 'route', (d) => d.network === '172.16.0.0/12').data.gateway_address, '192.168.1.254');
  assert.ok(plan.skipped.some((s) => s.source === 'OPNsense/OpenVPN'));
  assert.ok(!JSON.stringify(plan).includes('cHJpdmF0ZWtleWhlcmUxMjM0NTY3ODkwYWJjZGVmZ2g='), 'the private key never appears in a preview');

  // imported: the key is sealed at rest and redacted in exports
  const before = stored('wg_tunnel').length;
  const response = await importXml(xml);
  assert.equal(response.statusCode, 200, response.body);
  const wg0 = stored('wg_tunnel').slice(before).find((o) => o.data.name === 'wg0')!;
  assert.match(String(wg0.data.private_key), /^sealed:v1:/);
  assert.equal(t.app.context.sealer.open(String(wg0.data.private_key)), 'cHJpdmF0ZWtleWhlcmUxMjM0NTY3ODkwYWJjZGVmZ2g=');
  const exported = json(await t.app.inject({ method: 'GET', url: '/api/v1/config/export', headers: admin }));
  assert.ok(!JSON.stringify(exported).includes('cHJpdmF0ZWtleWhlcmUxMjM0NTY3ODkwYWJjZGVmZ2g='));
  assert.ok(exported.objects.filter((o: { kind: string }) => o.kind === 'thirdparty.wg_tunnel').every((o: { data: { private_key: string } }) => o.data.private_key === '**REDACTED**'));
});

test('opndossier sample 2 (OPNsense): a WireGuard instance with its peer linked by id', { skip: opnsenseDir.skip }, async () => {
  const xml = read(opnsenseDir, 'opndossier-sample.config.2.xml');
  const plan = await preview(xml);
  const tunnel = find(plan.objects, 'wg_tunnel', (d) => d.name === 'WGBootstrap');
  assert.equal(tunnel.data.listen_port, 51821);
  const peer = find(plan.objects, 'wg_peer', (d) => d.public_key === 'Nsn+T8a6qUyR1SP1dHW63cVYpGRhG4di/dDISSyUGT4=');
  assert.deepEqual(peer.data.allowed_ips, ['172.19.0.2/32']);
  const beforeIds = new Set(stored('wg_peer').map((o) => o.id));
  assert.equal((await importXml(xml)).statusCode, 200);
  const storedPeer = stored('wg_peer').find((o) => !beforeIds.has(o.id) && o.data.public_key === 'Nsn+T8a6qUyR1SP1dHW63cVYpGRhG4di/dDISSyUGT4=')!;
  const parent = t.app.context.store.get('thirdparty.wg_tunnel', String(storedPeer.data.tunnel_id));
  assert.equal(parent?.data.name, 'WGBootstrap', 'the peer points at its imported tunnel');
});

test('pfSense 2.7: VLAN, gateway, route through it, users without their hashes, interface addressing', { skip: pfsenseDir.skip }, async () => {
  // a fresh appliance: the lightvik import above already holds a gateway named GW_WAN
  const app = await startTestApp({ areas: lifecycleAreas(newProbe()) });
  const plan = await preview(read(pfsenseDir, 'opndossier-pfsense-config-2.7.x.xml'), {}, { app, headers: await adminHeaders(app.app) }).finally(() => app.close());
  assert.equal(plan.kind, 'pfsense');
  assert.deepEqual(plan.interfaces_found, ['wan', 'lan']);
  assert.deepEqual({ ...find(plan.objects, 'vlan', (d) => d.tag === 100).data }, { parent: 'igb1', tag: 100, pcp: null, description: 'Guest VLAN', device: 'igb1.100' });
  const gateway = find(plan.objects, 'gateway', (d) => d.name === 'GW_WAN');
  assert.equal(gateway.data.address, '203.0.113.1');
  assert.equal(find(plan.objects, 'route', (d) => d.network === '10.10.0.0/16').data.gateway_address, '203.0.113.1');
  const users = plan.objects.filter((o) => o.kind === 'imported_user');
  assert.deepEqual(users.map((u) => [u.data.username, u.data.role]), [['admin', 'admin'], ['operator', 'viewer']]);
  assert.ok(users.every((u) => !Object.keys(u.data).some((k) => /hash|password/.test(k))));
  const lan = find(plan.objects, 'interface', (d) => d.name === 'lan');
  assert.equal(lan.data.ipv4_address, '10.0.0.1/24');
  assert.equal(find(plan.objects, 'interface', (d) => d.name === 'wan').data.ipv4_mode, 'dhcp');
  assert.ok(plan.skipped.some((s) => s.source === 'snmpd'));
});

test('ahuacate (pfSense 23.3): DHCP static mappings, an unassigned WireGuard peer skipped', { skip: pfsenseDir.skip }, async () => {
  const plan = await preview(read(pfsenseDir, 'ahuacate-pfsense.all.xml'));
  const mapping = find(plan.objects, 'dhcp_static_mapping', (d) => d.hostname === 'nzbget');
  assert.equal(mapping.data.mac, '7e:31:d4:8b:80:e7');
  assert.equal(mapping.data.ip_address, '192.168.30.112');
  assert.equal(mapping.data.server, 'isc-dhcpd');
  assert.ok(plan.skipped.some((s) => s.source.startsWith('installedpackages/wireguard/peers') && /not assigned to a tunnel/.test(s.reason)));
  assert.equal(plan.counts.alias, 22);
});

test('pfSense redactor config: Unbound host overrides; OPNsense alias test: geoip and external aliases skipped with the reason', { skip: pfsenseDir.skip || opnsenseDir.skip }, async () => {
  const pf = await preview(read(pfsenseDir, 'pfsense-redactor-test-config1.xml'));
  assert.equal(find(pf.objects, 'dns_host_override', (d) => d.hostname === 'pkg').data.address, '172.27.10.115');
  const opn = await preview(read(opnsenseDir, 'opnsense-core-networkalias-test-config.xml'));
  assert.ok(opn.skipped.some((s) => s.element === 'alias geoip_NL' && /country lists/.test(s.reason)));
  assert.ok(opn.skipped.some((s) => s.element === 'alias external_alias' && /external program/.test(s.reason)));
  assert.deepEqual(find(opn.objects, 'alias', (d) => d.name === 'network_alias').data.entries, ['10.0.0.0/24']);
});

test('document type declarations, external entities and oversized files are refused; malformed XML is reported', async () => {
  const xxe = '<?xml version="1.0"?><!DOCTYPE pfsense [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><pfsense><system><hostname>&xxe;</hostname></system></pfsense>';
  for (const url of ['/api/v1/config/preview-thirdparty', '/api/v1/config/import-thirdparty']) {
    const response = await t.app.inject({ method: 'POST', url, headers: admin, payload: { xml: xxe } });
    assert.equal(response.statusCode, 400);
    assert.match(json(response).error, /document type declarations and entity definitions are refused/);
  }
  const bomb = '<!ENTITY a "aaaa"><pfsense/>';
  assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/config/preview-thirdparty', headers: admin, payload: { xml: bomb } })).statusCode, 400);
  const huge = `<pfsense><system><hostname>x</hostname></system>${'<!-- padding -->'.repeat(700_000)}</pfsense>`;
  const tooBig = await t.app.inject({ method: 'POST', url: '/api/v1/config/preview-thirdparty', headers: admin, payload: { xml: huge } });
  assert.equal(tooBig.statusCode, 413);
  const malformed = await preview('<pfsense><system></pfsense>');
  assert.equal(malformed.valid, false);
  assert.match(malformed.error!, /not well-formed/);
  const foreign = await preview('<sophos><x/></sophos>');
  assert.equal(foreign.valid, false);
  assert.match(foreign.error!, /root element must be <opnsense> or <pfsense>/);
  const before = t.app.context.store.snapshot().length;
  const refused = await importXml('<pfsense><system></pfsense>');
  assert.equal(refused.statusCode, 400);
  assert.equal(t.app.context.store.snapshot().length, before);
  assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/config/preview-thirdparty', headers: admin, payload: {} })).statusCode, 400);
});

test('with the VPN area present, WireGuard lands in its declared collections, validated and sealed by them', { skip: opnsenseDir.skip }, async () => {
  const { vpnArea } = await import('../src/areas/vpn/routes.js');
  const { authArea } = await import('../src/areas/auth/routes.js');
  const { configArea } = await import('../src/areas/config/routes.js');
  const app = await startTestApp({ areas: [authArea, vpnArea, configArea] });
  try {
    const headers = await adminHeaders(app.app);
    const on = { app, headers };
    const xml = read(opnsenseDir, 'opndossier-sample.config.2.xml');
    const plan = await preview(xml, {}, on);
    const tunnel = find(plan.objects, 'wg_tunnel', (d) => d.name === 'WGBootstrap');
    assert.equal(tunnel.stored_as, 'wg_tunnel');
    assert.equal(find(plan.objects, 'wg_peer', () => true).stored_as, 'wg_peer');
    assert.deepEqual(app.app.context.store.list('wg_tunnel'), [], 'the preview wrote nothing');

    const response = await importXml(xml, on);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(json(response).stored_as.wg_tunnel, 'wg_tunnel');
    const tunnels = json(await app.app.inject({ method: 'GET', url: '/api/v1/vpn/wg', headers }));
    assert.equal(tunnels.length, 1);
    assert.equal(tunnels[0].name, 'WGBootstrap');
    assert.equal(tunnels[0].interface, 'wg0');
    assert.equal(tunnels[0].listen_port, 51821);
    assert.equal(tunnels[0].address, '172.19.0.1/24');
    assert.equal(tunnels[0].public_key, 'cycoXogW3HFdogG8qSO0GMju3I0hrHYAJhmKnKgWsw0=', 'derived from the imported private key');
    assert.equal(tunnels[0].private_key, undefined);
    const peers = json(await app.app.inject({ method: 'GET', url: `/api/v1/vpn/wg/${tunnels[0].id}/peers`, headers }));
    assert.deepEqual(peers.map((p: { public_key: string; allowed_ips: string[] }) => [p.public_key, p.allowed_ips]), [['Nsn+T8a6qUyR1SP1dHW63cVYpGRhG4di/dDISSyUGT4=', ['172.19.0.2/32']]]);
    const stored = app.app.context.store.list('wg_tunnel')[0];
    assert.match(String(stored.data.private_key), /^sealed:v1:/);
    assert.equal(app.app.context.store.list('thirdparty.wg_tunnel').length, 0);
    // a second import: the tunnel exists, so it and its peer are skipped
    const again = await preview(xml, {}, on);
    assert.equal(again.counts.wg_tunnel, 0);
    assert.equal(again.counts.wg_peer, 0);
  } finally {
    await app.close();
  }
});
