import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { json } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';
import type { Headers } from '../helpers/auth.js';
import { createLinuxNetwork } from '../../src/platform/linux/network.js';
import { parseIfconfig, parseNetstatRoutes } from '../../src/platform/freebsd/network.js';

let t: AreaApp;
let headers: Headers;
before(async () => {
  t = await startAreaApp();
  headers = t.headers;
});
after(() => t.close());

const call: AreaApp['request'] = (method, url, payload) => t.request(method, url, payload);

test('simulated interfaces: listed, detailed with hex netmask and default-route gateway, counters move between reads', async () => {
  const list = json(await call('GET', '/api/v1/interfaces'));
  assert.deepEqual(list.map((i: { name: string }) => i.name), ['eth0', 'eth1', 'eth2']);
  const detailed = json(await call('GET', '/api/v1/interfaces/detailed'));
  const eth1 = detailed.find((i: { name: string }) => i.name === 'eth1');
  assert.equal(eth1.ipv4_netmask, '0xffffff00');
  assert.equal(detailed.find((i: { name: string }) => i.name === 'eth0').gateway, '203.0.113.1');
  assert.ok(detailed.some((i: { name: string }) => i.name === 'lo'), 'loopback is kept in the detailed view');
  const first = json(await call('GET', '/api/v1/interfaces/eth0/stats'));
  const second = json(await call('GET', '/api/v1/interfaces/eth0/stats'));
  assert.ok(second.bytes_in > first.bytes_in);
  assert.equal((await call('GET', '/api/v1/interfaces/nope0/stats')).statusCode, 404);
  assert.equal((await call('GET', '/api/v1/interfaces/bad%20name/stats')).statusCode, 400);
});

test('interface configuration and roles change the simulated host', async () => {
  const changed = await call('PUT', '/api/v1/interfaces/config/eth2', { ipv4_mode: 'static', ipv4_address: '10.20.0.1/24', mtu: 9000, enabled: true, description: 'DMZ' });
  assert.equal(changed.statusCode, 200, changed.body);
  assert.equal(json(changed).applied, true);
  const eth2 = json(await call('GET', '/api/v1/interfaces/config/eth2'));
  assert.deepEqual([eth2.ipv4, eth2.ipv4_prefix, eth2.mtu, eth2.status, eth2.description, eth2.ipv4_mode], ['10.20.0.1', 24, 9000, 'up', 'DMZ', 'static']);
  assert.match(json(await call('PUT', '/api/v1/interfaces/config/eth2', { ipv4_mode: 'static', ipv4_address: '10.20.0.1' })).error, /ipv4_address must be an IPv4 CIDR/);
  const badStatic = await call('PUT', '/api/v1/interfaces/config/eth2', { ipv4_mode: 'static', ipv4_address: '10.20.0.1' });
  assert.equal(badStatic.statusCode, 400, badStatic.body);
  assert.match(json(badStatic).error, /ipv4_address must be an IPv4 CIDR/);
  assert.equal((await call('PUT', '/api/v1/interfaces/config/nope0', { mtu: 1500 })).statusCode, 404);
  const system = json(await call('GET', '/api/v1/routes/system'));
  assert.ok(system.some((r: { destination: string; interface: string }) => r.destination === '10.20.0.0/24' && r.interface === 'eth2'));
  assert.deepEqual(json(await call('GET', '/api/v1/interfaces/eth1/role')), { name: 'eth1', role: null });
  assert.deepEqual(json(await call('PUT', '/api/v1/interfaces/eth0/role', { role: 'WAN' })), { name: 'eth0', role: 'WAN' });
  await call('PUT', '/api/v1/interfaces/eth1/role', { role: 'LAN' });
  await call('PUT', '/api/v1/interfaces/eth1/role', { role: 'lan' });
  assert.deepEqual(json(await call('GET', '/api/v1/interfaces/roles')), [['eth0', 'WAN'], ['eth1', 'lan']]);
  assert.match(json(await call('PUT', '/api/v1/interfaces/eth1/role', { role: '1bad role' })).error, /body\.role/);
  assert.equal((await call('PUT', '/api/v1/interfaces/nope0/role', { role: 'lan' })).statusCode, 404);
  assert.equal(json(await call('GET', '/api/v1/interfaces')).find((i: { name: string }) => i.name === 'eth0').role, 'WAN');
});

test('VLANs: create → list → update → delete; parent must exist; a VLAN used by a route is 409 on delete', async () => {
  const created = await call('POST', '/api/v1/vlans', { vlan_id: 30, parent: 'eth1', ipv4_mode: 'static', ipv4_address: '192.168.30.1/24', description: '  guests  ' });
  assert.equal(created.statusCode, 201, created.body);
  const vlan = json(created);
  assert.deepEqual([vlan.mtu, vlan.enabled, vlan.description], [1500, true, 'guests']);
  assert.match(json(await call('POST', '/api/v1/vlans', { vlan_id: 31, parent: 'nope0' })).error, /body\.parent: interface nope0 does not exist/);
  assert.match(json(await call('POST', '/api/v1/vlans', { vlan_id: 4095, parent: 'eth1' })).error, /body\.vlan_id/);
  assert.match(json(await call('POST', '/api/v1/vlans', { vlan_id: 32, parent: 'eth1', ipv4_mode: 'static' })).error, /ipv4_address/);
  assert.equal((await call('POST', '/api/v1/vlans', { vlan_id: 30, parent: 'eth1' })).statusCode, 409);
  const dhcpOnly = json(await call('POST', '/api/v1/vlans', { vlan_id: 40, parent: 'eth1', ipv4_mode: 'dhcp', ipv4_address: '10.0.0.1/24' }));
  assert.equal(dhcpOnly.ipv4_address, null, 'an address is only kept for static mode');
  assert.equal(json(await call('PUT', `/api/v1/vlans/${vlan.id}`, { mtu: 1400 })).mtu, 1400);
  const listed = json(await call('GET', '/api/v1/interfaces'));
  assert.ok(listed.some((i: { name: string; status: string }) => i.name === 'vlan30' && i.status === 'up'), 'a configured VLAN is created on the (simulated) host');
  const route = json(await call('POST', '/api/v1/routes', { destination: '10.99.0.0/16', gateway: '192.168.30.254', interface: 'vlan30' }));
  const refused = await call('DELETE', `/api/v1/vlans/${vlan.id}`);
  assert.equal(refused.statusCode, 409);
  assert.match(json(refused).error, /in use by static route/);
  assert.equal((await call('DELETE', `/api/v1/routes/${route.id}`)).statusCode, 204);
  assert.equal((await call('DELETE', `/api/v1/vlans/${vlan.id}`)).statusCode, 204);
  assert.equal((await call('DELETE', `/api/v1/vlans/${dhcpOnly.id}`)).statusCode, 204);
});

test('static routes: create → list → update → delete, installed into and withdrawn from the simulated routing table', async () => {
  const created = await call('POST', '/api/v1/routes', { destination: '172.30.0.0/16', gateway: '192.168.1.254', interface: 'eth1', metric: 10 });
  assert.equal(created.statusCode, 201, created.body);
  const route = json(created);
  assert.equal(route.fib, 0);
  const table = () => json(t.app.inject({ method: 'GET', url: '/api/v1/routes/system', headers }) as never);
  let system = json(await call('GET', '/api/v1/routes/system'));
  assert.ok(system.some((r: { destination: string; gateway: string }) => r.destination === '172.30.0.0/16' && r.gateway === '192.168.1.254'));
  assert.equal((await call('POST', '/api/v1/routes', { destination: '172.30.0.0/16', gateway: '192.168.1.253' })).statusCode, 409);
  assert.match(json(await call('POST', '/api/v1/routes', { destination: 'somewhere', gateway: '192.168.1.1' })).error, /body\.destination/);
  assert.match(json(await call('POST', '/api/v1/routes', { destination: '10.0.0.0/8', gateway: 'fe80::1' })).error, /same address family/);
  assert.match(json(await call('POST', '/api/v1/routes', { destination: '10.0.0.0/8', gateway: '192.168.1.1', interface: 'nope0' })).error, /body\.interface/);
  assert.equal(json(await call('PUT', `/api/v1/routes/${route.id}`, { enabled: false })).enabled, false);
  system = json(await call('GET', '/api/v1/routes/system'));
  assert.ok(!system.some((r: { destination: string }) => r.destination === '172.30.0.0/16'), 'a disabled route is withdrawn');
  await call('PUT', `/api/v1/routes/${route.id}`, { enabled: true, fib: 2 });
  assert.ok(json(await call('GET', '/api/v1/routes/system?fib=2')).some((r: { destination: string }) => r.destination === '172.30.0.0/16'));
  assert.equal((await call('DELETE', `/api/v1/routes/${route.id}`)).statusCode, 204);
  assert.deepEqual(json(await call('GET', '/api/v1/routes/system?fib=2')), []);
  void table;
});

test('dynamic DNS: records reference an ACME DNS provider (400 unknown, 409 while in use), config validates URLs, update resolves addresses', async () => {
  const unknown = await call('POST', '/api/v1/ddns/records', { provider_id: '00000000-0000-4000-8000-000000000000', hostname: 'home.example.org' });
  assert.equal(unknown.statusCode, 400);
  assert.match(json(unknown).error, /body\.provider_id/);
  // The provider belongs to the ACME area; it is placed in the store directly here.
  const provider = json(await call('POST', '/api/v1/acme/dns-providers', { name: 'cf-main', kind: 'manual', zone: 'example.org' }));
  const created = await call('POST', '/api/v1/ddns/records', { provider_id: provider.id, hostname: 'home.example.org', source: 'interface', interface: 'eth0' });
  assert.equal(created.statusCode, 201, created.body);
  const record = json(created);
  assert.deepEqual([record.record_type, record.ttl, record.provider_name, record.last_status], ['a', 60, 'cf-main', null]);
  assert.equal((await call('POST', '/api/v1/ddns/records', { provider_id: provider.id, hostname: 'home.example.org', source: 'interface', interface: 'eth0' })).statusCode, 409);
  assert.match(json(await call('POST', '/api/v1/ddns/records', { provider_id: provider.id, hostname: 'x.example.org', source: 'explicit', explicit_ip: '2001:db8::1' })).error, /family/);
  assert.match(json(await call('POST', '/api/v1/ddns/records', { provider_id: provider.id, hostname: 'x.example.org', ttl: 5 })).error, /body\.ttl/);
  assert.equal(json(await call('PUT', `/api/v1/ddns/records/${record.id}`, { ttl: 300 })).ttl, 300);
  const update = json(await call('POST', `/api/v1/ddns/records/${record.id}/update`));
  assert.equal(update.ok, false);
  assert.match(update.message, /cf-main \(manual\) cannot push A\/AAAA records/);
  const after = json(await call('GET', '/api/v1/ddns/records'))[0];
  assert.equal(after.last_status, 'error');
  await call('PUT', `/api/v1/ddns/records/${record.id}`, { enabled: false });
  assert.deepEqual(json(await call('POST', `/api/v1/ddns/records/${record.id}/update`)), { ok: true, message: 'Skipped("record disabled")' });
  assert.equal((await call('DELETE', `/api/v1/acme/dns-providers/${provider.id}`)).statusCode, 409);
  assert.equal((await call('DELETE', `/api/v1/ddns/records/${record.id}`)).statusCode, 204);
  assert.equal((await call('DELETE', `/api/v1/acme/dns-providers/${provider.id}`)).statusCode, 204);
  assert.equal(json(await call('GET', '/api/v1/ddns/config')).poll_interval_secs, 300);
  assert.match(json(await call('PUT', '/api/v1/ddns/config', { ip_echo_url_v4: 'http://api.ipify.org' })).error, /https/);
  assert.match(json(await call('PUT', '/api/v1/ddns/config', { ip_echo_url_v4: 'https://169.254.169.254/' })).error, /private or special/);
  assert.match(json(await call('PUT', '/api/v1/ddns/config', { poll_interval_secs: 10 })).error, /poll_interval_secs/);
});

test('linux driver reads the real loopback interface and routing table with ip -j', async () => {
  const network = createLinuxNetwork();
  const interfaces = await network.interfaces();
  const lo = interfaces.find((i) => i.name === 'lo');
  assert.ok(lo, 'lo is listed');
  assert.equal(lo.loopback, true);
  assert.equal(lo.ipv4, '127.0.0.1');
  assert.equal(lo.ipv4_prefix, 8);
  assert.equal(lo.up, true);
  assert.ok(lo.counters.packets_in >= 0);
  const routes = await network.routes(0);
  assert.ok(routes.every((r) => r.table === 0 && typeof r.destination === 'string'));
});

test('freebsd parsers read ifconfig and netstat output', () => {
  const ifconfig = [
    'em0: flags=8843<UP,BROADCAST,RUNNING,SIMPLEX,MULTICAST> metric 0 mtu 1500',
    '\tdescription: uplink',
    '\tether 00:0c:29:aa:bb:cc',
    '\tinet 198.51.100.7 netmask 0xffffff00 broadcast 198.51.100.255',
    '\tinet6 fe80::20c:29ff:feaa:bbcc%em0 prefixlen 64 scopeid 0x1',
    'vlan10: flags=8802<BROADCAST,SIMPLEX,MULTICAST> metric 0 mtu 1500',
    '\tvlan: 10 vlanproto: 802.1q vlanpcp: 0 parent interface: em0',
  ].join('\n');
  const parsed = parseIfconfig(ifconfig);
  assert.deepEqual(parsed.map((i) => [i.name, i.up, i.ipv4, i.ipv4_prefix, i.mac, i.ipv6, i.vlan_id, i.vlan_parent, i.description]), [
    ['em0', true, '198.51.100.7', 24, '00:0c:29:aa:bb:cc', null, null, null, 'uplink'],
    ['vlan10', false, null, null, null, null, 10, 'em0', null],
  ]);
  const routes = parseNetstatRoutes('Routing tables\n\nInternet:\nDestination        Gateway            Flags     Netif Expire\ndefault            198.51.100.1       UGS         em0\n198.51.100.0/24    link#1             U           em0\n', 0);
  assert.deepEqual(routes.map((r) => [r.destination, r.gateway, r.flags, r.interface]), [['default', '198.51.100.1', 'UGS', 'em0'], ['198.51.100.0/24', null, 'U', 'em0']]);
});

test('dynamic DNS pushes A records through a Cloudflare-compatible API (a loopback stand-in, admin allow-listed); a provider in use cannot be deleted', async () => {
  const seen: string[] = [];
  const records = new Map<string, { id: string; content: string }>();
  const api = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      seen.push(`${request.method} ${request.url} ${request.headers.authorization}`);
      response.setHeader('content-type', 'application/json');
      const url = new URL(request.url!, 'http://x');
      if (url.pathname === '/client/v4/zones') return response.end(JSON.stringify({ success: true, result: [{ id: 'zone1' }] }));
      if (url.pathname === '/client/v4/zones/zone1/dns_records' && request.method === 'GET') {
        const found = records.get(`${url.searchParams.get('type')} ${url.searchParams.get('name')}`);
        return response.end(JSON.stringify({ success: true, result: found ? [found] : [] }));
      }
      const sent = JSON.parse(body || '{}');
      const id = request.method === 'POST' ? `rec${records.size + 1}` : url.pathname.split('/').pop()!;
      records.set(`${sent.type} ${sent.name}`, { id, content: sent.content });
      response.end(JSON.stringify({ success: true, result: { id } }));
    });
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  const port = (api.address() as { port: number }).port;
  try {
    await call('PUT', '/api/v1/ddns/config', { allow_private_echo: ['127.0.0.1/32'] });
    const providerResponse = await call('POST', '/api/v1/acme/dns-providers', { name: 'cf-ddns', kind: 'cloudflare', zone: 'example.org', api_token: 'cf-token-123', extra: { api_base: `http://127.0.0.1:${port}/client/v4` } });
    assert.equal(providerResponse.statusCode, 201, providerResponse.body);
    const provider = json(providerResponse);
    const record = json(await call('POST', '/api/v1/ddns/records', { provider_id: provider.id, hostname: 'gw.example.org', source: 'explicit', explicit_ip: '203.0.113.9' }));
    assert.deepEqual(json(await call('POST', `/api/v1/ddns/records/${record.id}/update`)), { ok: true, message: 'Updated(["203.0.113.9"])' });
    assert.equal(records.get('A gw.example.org')?.content, '203.0.113.9');
    assert.ok(seen.every((line) => line.endsWith('Bearer cf-token-123')), 'the sealed token is used');
    assert.deepEqual(json(await call('POST', `/api/v1/ddns/records/${record.id}/update`)), { ok: true, message: 'Unchanged' });
    await call('PUT', `/api/v1/ddns/records/${record.id}`, { explicit_ip: '203.0.113.10' });
    assert.equal(json(await call('POST', `/api/v1/ddns/records/${record.id}/update`)).ok, true);
    assert.equal(records.get('A gw.example.org')?.content, '203.0.113.10');
    assert.ok(seen.some((line) => line.startsWith('PUT /client/v4/zones/zone1/dns_records/rec1')), 'the existing record is updated, not duplicated');
    const listed = json(await call('GET', '/api/v1/ddns/records')).find((r: { id: string }) => r.id === record.id);
    assert.deepEqual([listed.last_status, listed.last_ip, listed.provider_name], ['updated', '203.0.113.10', 'cf-ddns']);
    const inUse = await call('DELETE', `/api/v1/acme/dns-providers/${provider.id}`);
    assert.equal(inUse.statusCode, 409);
    assert.match(json(inUse).error, /in use by dynamic DNS record/);
    assert.equal((await call('DELETE', `/api/v1/ddns/records/${record.id}`)).statusCode, 204);
    assert.equal((await call('DELETE', `/api/v1/acme/dns-providers/${provider.id}`)).statusCode, 204);
  } finally {
    api.close();
  }
});
