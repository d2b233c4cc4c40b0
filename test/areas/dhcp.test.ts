import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { json } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';
import type { Headers } from '../helpers/auth.js';
import { sharedFile } from '../helpers/shared.js';
import { importKeaDhcp4 } from '../../src/render/kea/kea-import.js';

let t: AreaApp;
let headers: Headers;
before(async () => {
  t = await startAreaApp();
  headers = t.headers;
});
after(() => t.close());

const call: AreaApp['request'] = (method, url, payload) => t.request(method, url, payload);

const LAN = { network: '192.168.50.0/24', pool_start: '192.168.50.100', pool_end: '192.168.50.199', gateway: '192.168.50.1' };

test('subnets: create → list → update → delete; validation names the field', async () => {
  const created = await call('POST', '/api/v1/dhcp/v4/subnets', { ...LAN, dns_servers: ['192.168.50.1'], options: [{ code: 66, value_type: 'string', value: 'tftp.lan' }] });
  assert.equal(created.statusCode, 201, created.body);
  const subnet = json(created);
  assert.equal(subnet.subnet_type, 'address');
  assert.equal(subnet.enabled, true);
  assert.deepEqual(subnet.trusted_relays, []);
  assert.ok(json(await call('GET', '/api/v1/dhcp/v4/subnets')).some((s: { id: string }) => s.id === subnet.id));
  assert.equal(json(await call('PUT', `/api/v1/dhcp/v4/subnets/${subnet.id}`, { lease_time: 7200 })).lease_time, 7200);
  const cases: [object, RegExp][] = [
    [{ ...LAN, network: '192.168.50.0/33' }, /body\.network/],
    [{ ...LAN, network: '10.0.0.0/24' }, /body\.pool_start must be a host address inside/],
    [{ ...LAN, network: '192.168.51.0/24', pool_start: '192.168.51.200', pool_end: '192.168.51.100', gateway: '192.168.51.1' }, /pool_end must not be before/],
    [{ ...LAN, network: '192.168.52.0/24', pool_start: '192.168.52.10', pool_end: '192.168.52.20', gateway: '192.168.52.1', options: [{ code: 53, value_type: 'u8', value: '1' }] }, /options\.0\.code 53 is reserved/],
    [{ ...LAN, network: '192.168.52.0/24', pool_start: '192.168.52.10', pool_end: '192.168.52.20', gateway: '192.168.52.1', options: [{ code: 6, value_type: 'ip', value: '1.1.1.1' }] }, /set through the dns_servers field/],
    [{ ...LAN, network: '192.168.52.0/24', pool_start: '192.168.52.10', pool_end: '192.168.52.20', gateway: '192.168.52.1', options: [{ code: 150, value_type: 'hex', value: 'abc' }] }, /hex digits/],
    [{ ...LAN, network: '192.168.52.0/24', pool_start: '192.168.52.10', pool_end: '192.168.52.20', gateway: '192.168.52.1', trusted_relays: ['127.0.0.1'] }, /trusted_relays\.0/],
    [{ ...LAN, network: '192.168.52.0/24', pool_start: '192.168.52.10', pool_end: '192.168.52.20', gateway: '192.168.52.1', options: [{ code: 150, value_type: 'u8', value: '300' }] }, /within u8/],
  ];
  for (const [payload, message] of cases) {
    const response = await call('POST', '/api/v1/dhcp/v4/subnets', payload);
    assert.equal(response.statusCode, 400, JSON.stringify(payload));
    assert.match(json(response).error, message);
  }
  assert.equal((await call('POST', '/api/v1/dhcp/v4/subnets', LAN)).statusCode, 409, 'duplicate network');
  assert.equal((await call('DELETE', `/api/v1/dhcp/v4/subnets/${subnet.id}`)).statusCode, 204);
});

test('reservations reference their subnet: unknown subnet 400, deleting a subnet in use 409, address must be inside', async () => {
  const subnet = json(await call('POST', '/api/v1/dhcp/v4/subnets', LAN));
  const unknown = await call('POST', '/api/v1/dhcp/v4/reservations', { subnet_id: '00000000-0000-4000-8000-000000000000', mac_address: '02:00:00:00:00:01', ip_address: '192.168.50.10' });
  assert.equal(unknown.statusCode, 400);
  assert.match(json(unknown).error, /body\.subnet_id/);
  const outside = await call('POST', '/api/v1/dhcp/v4/reservations', { subnet_id: subnet.id, mac_address: '02:00:00:00:00:01', ip_address: '10.9.9.9' });
  assert.match(json(outside).error, /must lie inside subnet/);
  assert.match(json(await call('POST', '/api/v1/dhcp/v4/reservations', { mac_address: 'zz:00', ip_address: '192.168.50.10' })).error, /body\.mac_address/);
  const created = await call('POST', '/api/v1/dhcp/v4/reservations', { subnet_id: subnet.id, mac_address: '02:00:00:00:00:01', ip_address: '192.168.50.10', hostname: 'printer' });
  assert.equal(created.statusCode, 201, created.body);
  assert.equal((await call('POST', '/api/v1/dhcp/v4/reservations', { subnet_id: subnet.id, mac_address: '02:00:00:00:00:02', ip_address: '192.168.50.10' })).statusCode, 409);
  const inUse = await call('DELETE', `/api/v1/dhcp/v4/subnets/${subnet.id}`);
  assert.equal(inUse.statusCode, 409);
  assert.match(json(inUse).error, /in use by DHCP reservation/);
  assert.equal(json(await call('PUT', `/api/v1/dhcp/v4/reservations/${json(created).id}`, { hostname: 'printer2' })).hostname, 'printer2');
  assert.equal((await call('DELETE', `/api/v1/dhcp/v4/reservations/${json(created).id}`)).statusCode, 204);
  assert.equal((await call('DELETE', `/api/v1/dhcp/v4/subnets/${subnet.id}`)).statusCode, 204);
});

test('apply renders kea-dhcp4.conf that kea-dhcp4 -t accepts; the simulated server hands out leases; release and stop change state', async () => {
  const subnet = json(await call('POST', '/api/v1/dhcp/v4/subnets', { ...LAN, ntp_servers: ['192.168.50.1'], options: [{ code: 252, value_type: 'string', value: 'http://wpad.lan/wpad.dat' }, { code: 150, value_type: 'ips', value: '192.168.50.5,192.168.50.6' }] }));
  await call('POST', '/api/v1/dhcp/v4/reservations', { subnet_id: subnet.id, mac_address: '02:00:00:00:00:09', ip_address: '192.168.50.9', hostname: 'nas' });
  const config = await call('PUT', '/api/v1/dhcp/v4/config', { enabled: true, interfaces: ['eth1'] });
  assert.equal(config.statusCode, 200, config.body);
  const applyResponse = await call('POST', '/api/v1/dhcp/v4/apply');
  assert.equal(applyResponse.statusCode, 200, applyResponse.body);
  const applied = json(applyResponse);
  assert.equal(applied.check.checked, true, 'kea-dhcp4 is installed on this machine');
  assert.equal(applied.check.ok, true, applied.check.output);
  assert.equal(applied.running, true);
  const rendered = JSON.parse(readFileSync(join(t.dataDir, 'dhcp', 'kea-dhcp4.conf'), 'utf8'));
  assert.equal(rendered.Dhcp4.subnet4[0].subnet, '192.168.50.0/24');
  assert.deepEqual(rendered.Dhcp4.subnet4[0].reservations, [{ 'hw-address': '02:00:00:00:00:09', 'ip-address': '192.168.50.9', hostname: 'nas' }]);
  const status = json(await call('GET', '/api/v1/dhcp/status'));
  assert.equal(status.running, true);
  assert.equal(status.simulated, true);
  assert.equal(status.total_subnets, 1);
  assert.equal(status.active_leases, 3);
  const leases = json(await call('GET', '/api/v1/dhcp/v4/leases'));
  assert.equal(leases.length, 3);
  assert.ok(leases.some((l: { ip_address: string; hostname: string }) => l.ip_address === '192.168.50.9' && l.hostname === 'nas'));
  const pools = json(await call('GET', '/api/v1/dhcp/pool-stats'));
  assert.deepEqual(pools, [{ subnet: '192.168.50.0/24', total: 100, allocated: 2, available: 98, utilization: 2 }]);
  const metrics = await call('GET', '/api/v1/dhcp/metrics');
  assert.match(metrics.headers['content-type'] as string, /text\/plain/);
  assert.match(metrics.body, /bulwark_dhcp4_leases_assigned\{subnet="192\.168\.50\.0\/24"\} 2/);
  assert.equal(json(await call('DELETE', '/api/v1/dhcp/v4/leases/192.168.50.100')).message, 'Lease 192.168.50.100 released');
  assert.equal((await call('DELETE', '/api/v1/dhcp/v4/leases/192.168.50.100')).statusCode, 404);
  assert.equal((await call('DELETE', '/api/v1/dhcp/v4/leases/not-an-ip')).statusCode, 400);
  assert.equal(json(await call('GET', '/api/v1/dhcp/v4/leases')).length, 2);
  assert.equal(json(await call('POST', '/api/v1/dhcp/stop')).running, false);
  assert.equal(json(await call('GET', '/api/v1/dhcp/status')).version, 'stopped');
  assert.deepEqual(json(await call('GET', '/api/v1/dhcp/v4/leases')), []);
  assert.equal(json(await call('POST', '/api/v1/dhcp/restart')).running, true);
  assert.ok(json(await call('GET', '/api/v1/dhcp/logs')).some((l: string) => /started/.test(l)));
});

test('DDNS keeps the TSIG secret sealed and never returns it; HA config validates and reports status', async () => {
  const put = await call('PUT', '/api/v1/dhcp/ddns', { enabled: true, forward_zone: 'lan.example.', tsig_key: 'k1', tsig_secret: 'c2VjcmV0LXRzaWc=' });
  assert.equal(put.statusCode, 200, put.body);
  assert.equal(json(put).tsig_secret_set, true);
  assert.ok(!put.body.includes('c2VjcmV0LXRzaWc='));
  const got = await call('GET', '/api/v1/dhcp/ddns');
  assert.equal(json(got).tsig_secret, undefined);
  assert.equal(json(got).ttl, 300);
  assert.match(json(await call('PUT', '/api/v1/dhcp/ddns', { tsig_algorithm: 'sha1' })).error, /body\.tsig_algorithm/);
  assert.equal(json(await call('PUT', '/api/v1/dhcp/ddns', { tsig_secret: '' })).tsig_secret_set, false);
  assert.equal(json(await call('GET', '/api/v1/dhcp/ha/config')).mode, 'standalone');
  assert.match(json(await call('PUT', '/api/v1/dhcp/ha/config', { mode: 'hot-standby' })).error, /body\.peer is required/);
  assert.equal(json(await call('PUT', '/api/v1/dhcp/ha/config', { mode: 'hot-standby', peer: '192.168.50.2:8000' })).peer, '192.168.50.2:8000');
  assert.equal(json(await call('GET', '/api/v1/dhcp/ha/status')).mode, 'hot-standby');
});

for (const name of ['kea4-reservations.json', 'kea4-several-subnets.json', 'opnsense-generated-kea-dhcp4.json', 'kea4-single-subnet.json', 'kea4-multiple-options.json']) {
  const fixture = sharedFile(`fixtures/kea/${name}`);
  test(`real-world Kea config ${name}: imported into the model over HTTP, re-rendered and accepted by kea-dhcp4 -t`, { skip: fixture.skip }, async () => {
    const app = await startAreaApp();
    try {
      const admin = app.headers;
      const imported = importKeaDhcp4(readFileSync(fixture.path, 'utf8'));
      // Kea allows a subnet without a router option; Bulwark's model needs a gateway, so such a subnet is reported, not guessed.
      for (const reason of imported.skipped.filter((s) => s.startsWith('subnet'))) assert.match(reason, /no router option|no pool/);
      assert.ok(imported.subnets.length + imported.skipped.length > 0);
      const ids = new Map<string, string>();
      for (const subnet of imported.subnets) {
        const { kea_id: _kea, ...body } = subnet;
        const response = await app.app.inject({ method: 'POST', url: '/api/v1/dhcp/v4/subnets', headers: admin, payload: body });
        assert.equal(response.statusCode, 201, `${subnet.network}: ${response.body}`);
        ids.set(subnet.network, json(response).id);
      }
      for (const reservation of imported.reservations) {
        const { network, ...body } = reservation;
        const payload = { ...body, subnet_id: ids.get(network) ?? null, mac_address: body.mac_address };
        const response = await app.app.inject({ method: 'POST', url: '/api/v1/dhcp/v4/reservations', headers: admin, payload });
        assert.equal(response.statusCode, 201, `${reservation.ip_address}: ${response.body}`);
      }
      await app.app.inject({ method: 'PUT', url: '/api/v1/dhcp/v4/config', headers: admin, payload: { interfaces: ['eth0'] } });
      const applied = json(await app.app.inject({ method: 'POST', url: '/api/v1/dhcp/v4/apply', headers: admin }));
      assert.equal(applied.check.ok, true, applied.check.output);
      const rendered = JSON.parse(readFileSync(join(app.dataDir, 'dhcp', 'kea-dhcp4.conf'), 'utf8'));
      assert.equal(rendered.Dhcp4.subnet4.length, imported.subnets.length);
      const renderedReservations = rendered.Dhcp4.subnet4.flatMap((s: { reservations: unknown[] }) => s.reservations).length;
      assert.equal(renderedReservations, imported.reservations.filter((r) => ids.has(r.network)).length);
    } finally {
      await app.close();
    }
  });
}

test('the Kea fixture with every identifier kind: MAC and client-id reservations imported, others reported as skipped', { skip: sharedFile('fixtures/kea/kea4-reservations.json').skip }, () => {
  const imported = importKeaDhcp4(readFileSync(sharedFile('fixtures/kea/kea4-reservations.json').path, 'utf8'));
  assert.deepEqual(imported.reservations.map((r) => r.ip_address), ['192.0.2.201', '192.0.2.202', '192.0.2.205']);
  assert.equal(imported.reservations[1].hostname, 'special-snowflake');
  assert.equal(imported.skipped.length, 4);
  assert.equal(imported.skipped.length + imported.reservations.length, 6 + imported.skipped.filter((s) => s.startsWith('subnet')).length);
});
