import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { json } from './helpers/app.js';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';
import type { Headers } from './helpers/auth.js';
import { sharedFile } from './helpers/shared.js';
import type { Area } from '../src/areas/area.js';
import type { AppContext } from '../src/context.js';
import { newLiveFeeds } from '../src/live/feeds.js';
import { PendingFlags } from '../src/live/pending-flags.js';
import { createAuthArea } from '../src/areas/auth/routes.js';
import { createPacketFilterArea } from '../src/areas/packet-filter/routes.js';
import { createNetworkingArea } from '../src/areas/networking/routes.js';
import { createMultiwanArea } from '../src/areas/multiwan/routes.js';
import { createDhcpArea } from '../src/areas/dhcp/routes.js';
import { createDnsArea } from '../src/areas/dns/routes.js';
import { createVpnArea } from '../src/areas/vpn/routes.js';
import { createConfigArea } from '../src/areas/config/routes.js';

const opnsenseDir = sharedFile('fixtures/opnsense');
const pfsenseDir = sharedFile('fixtures/pfsense');

/** The areas that own the imported kinds, with the configuration lifecycle (the DNS area's flag goes nowhere here). */
function targetAreas(context: AppContext): Area[] {
  const pendingFlags = new PendingFlags(context.events);
  return [
    createAuthArea(context), createPacketFilterArea(context, { pendingFlags }), createNetworkingArea(context), createMultiwanArea(context),
    createDhcpArea(context), createDnsArea(context, { pendingFlags, dnsEvents: newLiveFeeds().dns }), createVpnArea(context), createConfigArea(context),
  ];
}
const get = async (on: { app: AreaApp; headers: Headers }, url: string) => {
  const response = await on.app.app.inject({ method: 'GET', url, headers: on.headers });
  assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
  return json(response);
};

let t: AreaApp;
let admin: Headers;
before(async () => {
  t = await startAreaApp({ areas: targetAreas });
  admin = t.headers;
});
after(() => t.close());

type Mapped = { kind: string; stored_as: string; source: string; data: Record<string, any>; notes: string[] };
type Skipped = { source: string; element: string; reason: string };

const preview = async (xml: string, extra: object = {}, on: { app: AreaApp; headers: Headers } = { app: t, headers: admin }) => {
  const response = await on.app.app.inject({ method: 'POST', url: '/api/v1/config/preview-thirdparty', headers: on.headers, payload: { xml, ...extra } });
  assert.equal(response.statusCode, 200, response.body);
  return json(response) as { valid: boolean; kind: string; counts: Record<string, number>; objects: Mapped[]; skipped: Skipped[]; error: string | null; system: any; interfaces_found: string[] };
};
const importXml = (xml: string, on: { app: AreaApp; headers: Headers } = { app: t, headers: admin }) =>
  on.app.app.inject({ method: 'POST', url: '/api/v1/config/import-thirdparty', headers: on.headers, payload: { xml } });
const read = (dir: { path: string }, name: string) => readFileSync(`${dir.path}/${name}`, 'utf8');
const stored = (kind: string) => t.app.context.store.list(kind);
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
      const app = await startAreaApp({ areas: targetAreas });
      const on = { app, headers: app.headers };
      try {
      const plan = await preview(xml, { interface_map: { lan: 'eth1', wan: 'eth0' } }, on);
      assert.equal(plan.valid, true, plan.error ?? '');
      assert.equal(plan.kind, dir === opnsenseDir ? 'opnsense' : 'pfsense');
      assert.ok(plan.objects.length > 0, 'something is mapped from every fixture');
      for (const skipped of plan.skipped) assert.ok(skipped.reason.length > 5 && skipped.source.length > 0, JSON.stringify(skipped));
      const text = JSON.stringify(plan);
      assert.ok(!/\$2[aby]\$/.test(text), 'no bcrypt hash in the preview');
      // every kind lands in the collection of the area that owns it; only users stay an intermediate record
      for (const object of plan.objects) assert.ok(object.kind === 'imported_user' ? object.stored_as === 'thirdparty.imported_user' : !object.stored_as.startsWith('thirdparty.'), `${object.kind} → ${object.stored_as}`);
      assert.ok(!plan.skipped.some((s) => /no area of this build/.test(s.reason)), 'every kind has a target in this build');

      const before = app.app.context.store.snapshot().length;
      const response = await on.app.app.inject({ method: 'POST', url: '/api/v1/config/import-thirdparty', headers: on.headers, payload: { xml, interface_map: { lan: 'eth1', wan: 'eth0' } } });
      assert.equal(response.statusCode, 200, response.body);
      const result = json(response);
      assert.equal(result.objects, plan.objects.length);
      assert.deepEqual(result.imported, plan.counts);
      assert.equal(result.pending, true, 'imported, not applied');
      assert.equal(app.app.context.store.snapshot().length, before + plan.objects.length);
      assert.ok(!JSON.stringify(app.app.context.store.snapshot()).match(/\$2[aby]\$/), 'no password hash stored');
      // importing the same file again creates no second alias, gateway, interface, tunnel or user
      const again = await preview(xml, { interface_map: { lan: 'eth1', wan: 'eth0' } }, on);
      for (const kind of ['alias', 'gateway', 'interface', 'wg_tunnel', 'imported_user', 'vlan']) assert.equal(again.counts[kind], 0, kind);
      // the packet filter's pending report shows what the import added; nothing is applied yet
      const pending = await get(on, '/api/v1/pending');
      const added = (name: string) => pending.changes[name].added.length;
      assert.equal(added('rules'), plan.counts.rule);
      assert.equal(added('aliases'), plan.counts.alias);
      assert.equal(added('nat'), plan.counts.nat_port_forward + plan.counts.nat_outbound);
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

test('aifw-medium imported: real aliases, rules, NAT, route and gateway through the API, pending until POST /reload compiles them', { skip: opnsenseDir.skip }, async () => {
  const app = await startAreaApp({ areas: targetAreas });
  const on = { app, headers: app.headers };
  try {
    const xml = read(opnsenseDir, 'aifw-medium.xml');
    const response = await app.app.inject({ method: 'POST', url: '/api/v1/config/import-thirdparty', headers: on.headers, payload: { xml, interface_map: { lan: 'eth1', wan: 'eth0' } } });
    assert.equal(response.statusCode, 200, response.body);
    const result = json(response);
    assert.deepEqual(result.stored_as, { gateway: 'mw_gateway', route: 'static_route', alias: 'alias', rule: 'rule', nat_port_forward: 'nat', nat_outbound: 'nat' });
    assert.ok(result.skipped.some((s: Skipped) => s.element.includes('captive portal') && /lanip/.test(s.reason)));

    const aliases = await get(on, '/api/v1/aliases');
    const servers = aliases.find((a: any) => a.name === 'my_servers');
    assert.deepEqual([servers.alias_type, servers.entries, servers.description], ['host', ['10.0.0.5', '10.0.0.6'], 'web tier']);
    assert.deepEqual(aliases.find((a: any) => a.name === 'blocked_nets').entries, ['198.51.100.0/24']);

    const rules = await get(on, '/api/v1/rules');
    assert.equal(rules.length, 4);
    const https = rules.find((r: any) => r.description === 'web tier outbound HTTPS');
    assert.equal(https.rule_match.src_addr, '<my_servers>', 'the rule names the imported alias');
    assert.deepEqual(https.rule_match.dst_port, { start: 443, end: 443 });
    assert.deepEqual([https.action, https.interface, https.protocol, https.status], ['pass', 'eth1', 'tcp', 'active']);
    const ssh = rules.find((r: any) => r.description === 'SSH to firewall (IPv6)');
    assert.deepEqual([ssh.ip_version, ssh.rule_match.dst_addr, ssh.log], ['inet6', '2001:db8::1', true]);
    assert.deepEqual(rules.filter((r: any) => r.description === 'block floating bad nets').map((r: any) => [r.interface, r.action, r.rule_match.src_addr]), [['eth0', 'block', '<blocked_nets>'], ['eth1', 'block', '<blocked_nets>']]);
    assert.deepEqual(rules.map((r: any) => r.description), ['SSH to firewall (IPv6)', 'web tier outbound HTTPS', 'block floating bad nets', 'block floating bad nets'], 'file order kept');
    // an alias in use cannot be deleted: the reference is real
    assert.equal((await app.app.inject({ method: 'DELETE', url: `/api/v1/aliases/${servers.id}`, headers: on.headers })).statusCode, 409);

    const nat = await get(on, '/api/v1/nat');
    const forward = nat.find((n: any) => n.nat_type === 'dnat');
    assert.deepEqual([forward.interface, forward.protocol, forward.dst_addr, forward.dst_port, forward.redirect, forward.label], ['eth0', 'tcp', 'any', { start: 443, end: 443 }, { address: '10.0.0.10', port: { start: 443, end: 443 } }, 'HTTPS forward']);
    const masquerade = nat.find((n: any) => n.nat_type === 'masquerade');
    assert.deepEqual([masquerade.interface, masquerade.src_addr, masquerade.label], ['eth0', '10.0.0.0/8', 'masq lan']);

    const routes = await get(on, '/api/v1/routes');
    assert.deepEqual(routes.map((r: any) => [r.destination, r.gateway, r.description]), [['192.0.2.0/24', '1.2.3.1', 'Test net via WAN']]);
    const gateways = await get(on, '/api/v1/multiwan/gateways');
    assert.deepEqual(gateways.map((g: any) => [g.name, g.interface, g.next_hop, g.ip_version]), [['WAN_GW', 'eth0', '1.2.3.1', 'v4']]);

    const pending = await get(on, '/api/v1/pending');
    assert.equal(pending.firewall, true);
    assert.equal(pending.nat, true);
    assert.equal(pending.changes.rules.added.length, 4);
    assert.equal(pending.changes.aliases.added.length, 2);
    assert.equal(pending.changes.nat.added.length, 2);
    const reload = await app.app.inject({ method: 'POST', url: '/api/v1/reload', headers: on.headers });
    assert.equal(reload.statusCode, 200, reload.body);
    assert.equal(json(reload).rules, 4);
    assert.equal(json(reload).nat_rules, 2);
    const after = await get(on, '/api/v1/pending');
    assert.equal(after.firewall, false);
    assert.equal(after.nat, false);
    const compiled = (await get(on, '/api/v1/nat/pf-output')).join('\n');
    assert.match(compiled, /10\.0\.0\.10/, 'the port forward is in the compiled NAT ruleset');
  } finally {
    await app.close();
  }
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
  const response = await t.app.inject({ method: 'POST', url: '/api/v1/config/import-thirdparty', headers: admin, payload: { xml, interface_map: { lan: 'eth1', wan: 'eth0' } } });
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(json(response).stored_as.wg_tunnel, 'wg_tunnel');
  const wg0 = stored('wg_tunnel').slice(before).find((o) => o.data.name === 'wg0')!;
  assert.match(String(wg0.data.private_key), /^sealed:v1:/);
  assert.equal(t.app.context.sealer.open(String(wg0.data.private_key)), 'cHJpdmF0ZWtleWhlcmUxMjM0NTY3ODkwYWJjZGVmZ2g=');
  const exported = json(await t.app.inject({ method: 'GET', url: '/api/v1/config/export', headers: admin }));
  assert.ok(!JSON.stringify(exported).includes('cHJpdmF0ZWtleWhlcmUxMjM0NTY3ODkwYWJjZGVmZ2g='));
  const exportedTunnels = exported.objects.filter((o: { kind: string }) => o.kind === 'wg_tunnel');
  assert.ok(exportedTunnels.length > 0 && exportedTunnels.every((o: { data: { private_key: string } }) => o.data.private_key === '**REDACTED**'));
  const on = { app: t, headers: admin };
  assert.ok((await get(on, '/api/v1/dhcp/v4/reservations')).some((r: any) => r.mac_address === 'aa:bb:cc:dd:ee:ff' && r.ip_address === '192.168.1.10' && r.hostname === 'printer'));
  assert.ok((await get(on, '/api/v1/dns/resolver/hosts')).some((h: any) => h.hostname === 'nas' && h.value === '192.168.1.20' && h.record_type === 'A'));
  assert.deepEqual((await get(on, '/api/v1/vlans')).map((v: any) => [v.vlan_id, v.parent]), [[100, 'eth0'], [200, 'eth0']], 'vtnet0 is the device of wan, mapped to eth0');
});

test('opndossier sample 2 (OPNsense): a WireGuard instance with its peer linked by id', { skip: opnsenseDir.skip }, async () => {
  const xml = read(opnsenseDir, 'opndossier-sample.config.2.xml');
  const plan = await preview(xml);
  const tunnel = find(plan.objects, 'wg_tunnel', (d) => d.name === 'WGBootstrap');
  assert.equal(tunnel.data.listen_port, 51821);
  const peer = find(plan.objects, 'wg_peer', (d) => d.public_key === 'Nsn+T8a6qUyR1SP1dHW63cVYpGRhG4di/dDISSyUGT4=');
  assert.deepEqual(peer.data.allowed_ips, ['172.19.0.2/32']);
  assert.equal(peer.stored_as, 'wg_peer');
  const beforeIds = new Set(stored('wg_peer').map((o) => o.id));
  assert.equal((await importXml(xml)).statusCode, 200);
  const storedPeer = stored('wg_peer').find((o) => !beforeIds.has(o.id) && o.data.public_key === 'Nsn+T8a6qUyR1SP1dHW63cVYpGRhG4di/dDISSyUGT4=')!;
  const parent = t.app.context.store.get('wg_tunnel', String(storedPeer.data.tunnel_id));
  assert.equal(parent?.data.name, 'WGBootstrap', 'the peer points at its imported tunnel');
});

test('pfSense 2.7: VLAN, gateway, route through it, users without their hashes, interface addressing', { skip: pfsenseDir.skip }, async () => {
  // a fresh appliance: the lightvik import above already holds a gateway named GW_WAN
  const app = await startAreaApp({ areas: targetAreas });
  const on = { app, headers: app.headers };
  try {
  const xml = read(pfsenseDir, 'opndossier-pfsense-config-2.7.x.xml');
  const unmapped = await preview(xml, {}, on);
  assert.ok(unmapped.skipped.some((s) => s.element === 'interface lan' && /map it to a local interface with interface_map/.test(s.reason)), 'a source interface name is not a local interface');
  assert.ok(unmapped.skipped.some((s) => /vlan/.test(s.element) && /interface igb1 does not exist on this appliance/.test(s.reason)), 'the VLAN parent is checked against the host');
  const interfaceMap = { lan: 'eth1', wan: 'eth0' };
  const plan = await preview(xml, { interface_map: interfaceMap }, on);
  assert.equal(plan.kind, 'pfsense');
  assert.deepEqual(plan.interfaces_found, ['wan', 'lan']);
  assert.deepEqual({ ...find(plan.objects, 'vlan', (d) => d.tag === 100).data }, { parent: 'eth1', tag: 100, pcp: null, description: 'Guest VLAN', device: 'igb1.100', ipv4_address: null });
  const gateway = find(plan.objects, 'gateway', (d) => d.name === 'GW_WAN');
  assert.equal(gateway.data.address, '203.0.113.1');
  assert.equal(find(plan.objects, 'route', (d) => d.network === '10.10.0.0/16').data.gateway_address, '203.0.113.1');
  const users = plan.objects.filter((o) => o.kind === 'imported_user');
  assert.deepEqual(users.map((u) => [u.data.username, u.data.role]), [['admin', 'admin'], ['operator', 'viewer']]);
  assert.ok(users.every((u) => !Object.keys(u.data).some((k) => /hash|password/.test(k))));
  const lan = find(plan.objects, 'interface', (d) => d.name === 'eth1');
  assert.equal(lan.data.ipv4_address, '10.0.0.1/24');
  assert.ok(lan.notes.some((n) => /addressing not imported \(10\.0\.0\.1\/24\)/.test(n)));
  assert.equal(find(plan.objects, 'interface', (d) => d.name === 'eth0').data.ipv4_mode, 'dhcp');
  assert.ok(plan.skipped.some((s) => s.source === 'snmpd'));

  const response = await app.app.inject({ method: 'POST', url: '/api/v1/config/import-thirdparty', headers: on.headers, payload: { xml, interface_map: interfaceMap } });
  assert.equal(response.statusCode, 200, response.body);
  const vlans = await get(on, '/api/v1/vlans');
  assert.deepEqual(vlans.map((v: any) => [v.vlan_id, v.parent, v.description, v.ipv4_mode, v.enabled]), [[100, 'eth1', 'Guest VLAN', 'none', true]]);
  const routes = await get(on, '/api/v1/routes');
  assert.deepEqual(routes.map((r: any) => [r.destination, r.gateway, r.fib]), [['10.10.0.0/16', '203.0.113.1', 0]]);
  const gateways = await get(on, '/api/v1/multiwan/gateways');
  assert.deepEqual(gateways.map((g: any) => [g.name, g.interface, g.next_hop]), [['GW_WAN', 'eth0', '203.0.113.1']]);
  assert.deepEqual(await get(on, '/api/v1/interfaces/roles'), [['eth0', 'wan'], ['eth1', 'lan']]);
  // users are records for an administrator, not accounts
  assert.deepEqual(app.app.context.store.list('thirdparty.imported_user').map((u) => u.data.username), ['admin', 'operator']);
  } finally {
    await app.close();
  }
});

test('ahuacate (pfSense 23.3): DHCP static mappings, an unassigned WireGuard peer skipped', { skip: pfsenseDir.skip }, async () => {
  const plan = await preview(read(pfsenseDir, 'ahuacate-pfsense.all.xml'));
  const mapping = find(plan.objects, 'dhcp_static_mapping', (d) => d.hostname === 'nzbget');
  assert.equal(mapping.data.mac, '7e:31:d4:8b:80:e7');
  assert.equal(mapping.data.ip_address, '192.168.30.112');
  assert.equal(mapping.data.server, 'isc-dhcpd');
  assert.ok(plan.skipped.some((s) => s.source.startsWith('installedpackages/wireguard/peers') && /not assigned to a tunnel/.test(s.reason)));
  // 22 aliases in the file: the ones the alias collection refuses are skipped with its reason, not stored broken
  const refused = plan.skipped.filter((s) => s.element.startsWith('alias ') && s.reason.startsWith('alias: body.'));
  assert.equal(plan.counts.alias + refused.length, 22);
  assert.ok(refused.length > 0);
  const response = await importXml(read(pfsenseDir, 'ahuacate-pfsense.all.xml'));
  assert.equal(response.statusCode, 200, response.body);
  const reservations = await get({ app: t, headers: admin }, '/api/v1/dhcp/v4/reservations');
  const nzbget = reservations.find((r: any) => r.hostname === 'nzbget');
  assert.deepEqual([nzbget.mac_address, nzbget.ip_address], ['7e:31:d4:8b:80:e7', '192.168.30.112']);
});

test('pfSense redactor config: Unbound host overrides; OPNsense alias test: geoip and external aliases skipped with the reason', { skip: pfsenseDir.skip || opnsenseDir.skip }, async () => {
  const pf = await preview(read(pfsenseDir, 'pfsense-redactor-test-config1.xml'));
  assert.equal(find(pf.objects, 'dns_host_override', (d) => d.hostname === 'pkg').data.address, '172.27.10.115');
  assert.equal((await importXml(read(pfsenseDir, 'pfsense-redactor-test-config1.xml'))).statusCode, 200);
  const hosts = await get({ app: t, headers: admin }, '/api/v1/dns/resolver/hosts');
  assert.deepEqual(hosts.filter((h: any) => h.domain === 'pfsense.org').map((h: any) => [h.hostname, h.record_type, h.value]), [['pkg', 'A', '172.27.10.115']]);
  // an alias the collection refuses (a host name in a network alias) is skipped with the validator's reason, never a 500
  const mixed = await preview(read(opnsenseDir, 'opndossier-opnsense-aliases.xml'));
  assert.ok(mixed.skipped.some((s) => s.element === 'alias MIXED_TYPES' && /body\.entries\.3: "mail\.example\.org" is not an IPv4\/IPv6 address/.test(s.reason)));
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
  const app = await startAreaApp({ areas: (context) => [createAuthArea(context), createVpnArea(context), createConfigArea(context)] });
  try {
    const headers = app.headers;
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
