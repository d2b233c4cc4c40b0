/**
 * Restore, import and the commit-confirm rollback re-apply the network (interface addresses, static routes) like
 * every other applier, proven in the kernel of a firewall namespace the test creates: Bulwark (`--platform
 * linux`) there, a veth to a peer namespace. Only loopback and these namespaces are touched.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';
import { NetnsLab, inNamespace } from '../helpers/netns-lab.js';
import { integrityOf } from '../../src/areas/config/export-format.js';
import { openDatabase } from '../../src/store/database.js';
import { ConfigStore } from '../../src/store/config-store.js';
import { systemClock } from '../../src/core/clock.js';

const skip = systemSkip('the restore namespace lab', { root: true, programs: ['ip', 'nft'] });
const DESTINATION = '203.0.113.0/24';
let lab: NetnsLab;
let fw = '';
let link = '';
let port = 0;

/** The kernel's route to DESTINATION in the firewall namespace ('' when there is none). */
const kernelRoute = () => inNamespace(fw, 'ip', ['-4', 'route', 'show', DESTINATION]).trim();
/** The IPv4 addresses the kernel holds on the link. */
const kernelAddresses = () => (JSON.parse(inNamespace(fw, 'ip', ['-j', '-4', 'addr', 'show', 'dev', link]))[0].addr_info as { local: string; prefixlen: number }[]).map((a) => `${a.local}/${a.prefixlen}`);

async function until(condition: () => boolean, limitMs: number): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return condition();
}

before(async () => {
  if (skip) return;
  lab = new NetnsLab('b36');
  fw = lab.namespace('fw');
  const peer = lab.namespace('pe');
  link = `b36f${lab.tag.slice(-8)}`;
  lab.link({ ns: fw, name: link }, { ns: peer, name: `b36p${lab.tag.slice(-8)}`, address: '10.36.0.2/24' });
  port = await freePort();
  lab.startBulwark(fw, port);
});

after(async () => {
  if (lab) await lab.cleanup();
});

test('restore of an earlier version withdraws a static route and puts the interface address back; the answer names the appliers', { skip, timeout: 120_000 }, () => {
  lab.call('PUT', `/api/v1/interfaces/config/${link}`, { ipv4_mode: 'static', ipv4_address: '10.36.0.1/24' });
  const before = lab.call('POST', '/api/v1/reload').version;
  assert.equal(kernelRoute(), '', 'no route yet');

  lab.call('PUT', `/api/v1/interfaces/config/${link}`, { ipv4_mode: 'static', ipv4_address: '10.36.0.7/24' });
  lab.call('POST', '/api/v1/routes', { destination: DESTINATION, gateway: '10.36.0.2', interface: link });
  lab.call('POST', '/api/v1/reload');
  assert.match(kernelRoute(), /via 10\.36\.0\.2/, 'the route is in the kernel');
  assert.deepEqual(kernelAddresses(), ['10.36.0.7/24']);

  const restored = lab.call('POST', '/api/v1/config/restore', { version: before }, 200);
  assert.equal(restored.restored_from, before);
  assert.equal(kernelRoute(), '', 'the restore withdrew the route from the kernel');
  assert.deepEqual(kernelAddresses(), ['10.36.0.1/24'], 'the restore put the earlier address back');
  const networking = restored.appliers.find((a: { name: string }) => a.name === 'networking');
  assert.deepEqual(networking && { name: networking.name, ok: networking.ok }, { name: 'networking', ok: true }, JSON.stringify(restored.appliers));
  assert.ok(restored.appliers.some((a: { name: string }) => a.name === 'packet_filter'), JSON.stringify(restored.appliers));
  assert.deepEqual(lab.call('GET', '/api/v1/routes'), [], 'and the stored routes are the earlier ones');
});

test('an expired commit-confirm window rolls back a route added while it was open: the route leaves the kernel', { skip, timeout: 120_000 }, async () => {
  lab.call('POST', '/api/v1/reload');
  assert.equal(kernelRoute(), '');
  const opened = lab.call('POST', '/api/v1/config/commit-confirm', { timeout_seconds: 10, description: 'route change' }, 200);
  assert.match(opened.message, /Commit-confirm window open/);
  lab.call('POST', '/api/v1/routes', { destination: DESTINATION, gateway: '10.36.0.2', interface: link });
  assert.match(kernelRoute(), /via 10\.36\.0\.2/, 'the route is in the kernel while the window is open');

  // Nobody confirms: Bulwark's own timer rolls back at the deadline (10 s, the shortest window).
  assert.ok(await until(() => kernelRoute() === '', 30_000), `the rollback withdrew the route: ${kernelRoute()}\n${lab.log}`);
  const status = lab.call('GET', '/api/v1/config/commit-confirm/status');
  assert.equal(status.last.outcome, 'rolled_back', JSON.stringify(status.last));
  assert.ok(status.last.appliers.some((a: { name: string; ok: boolean }) => a.name === 'networking' && a.ok), JSON.stringify(status.last));
  assert.deepEqual(lab.call('GET', '/api/v1/routes'), []);
});

test('an import that would take down the address the request reached is 409 without ?confirm_management_cut=true, as an interface change is; a restore that keeps it passes', { skip, timeout: 120_000 }, () => {
  // The API listens on 127.0.0.1 here: a version in which lo is down would cut it.
  lab.call('PUT', '/api/v1/interfaces/config/lo', { enabled: false }, 409);
  const [down] = lab.api(['PUT', '/api/v1/interfaces/config/lo?confirm_management_cut=true', { enabled: true, description: 'loopback' }]);
  assert.equal(down.status, 200, JSON.stringify(down));
  const saved = lab.call('POST', '/api/v1/config/save', { comment: 'lo described' }, 200).version;
  // A stored lo setting with enabled:false (as an edited export would carry), then restore the saved version: fine.
  const exported = lab.call('GET', '/api/v1/config/export');
  const cutting = JSON.parse(JSON.stringify(exported));
  let edited = 0;
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') {
      const object = value as Record<string, unknown>;
      if (object.name === 'lo' && 'enabled' in object) {
        object.enabled = false;
        edited++;
      }
      Object.values(object).forEach(walk);
    }
  };
  walk(cutting);
  assert.equal(edited, 1, 'the export carries the lo setting once');
  // An administrator's deliberate edit: the redacted export's checksum recomputed, as its format allows.
  const { integrity: _integrity, ...rest } = cutting;
  cutting.integrity = integrityOf(rest);
  const [refused] = lab.api(['POST', '/api/v1/config/import', cutting]);
  assert.equal(refused.status, 409, JSON.stringify(refused));
  assert.match(refused.body.error, /this import takes lo down, and with it the management address 127\.0\.0\.1.*confirm_management_cut=true/);
  assert.ok(JSON.parse(inNamespace(fw, 'ip', ['-j', 'link', 'show', 'dev', 'lo']))[0].flags.includes('UP'), 'lo is still up');
  const restored = lab.call('POST', '/api/v1/config/restore', { version: saved }, 200);
  assert.equal(restored.restored_from, saved);
});

test('a start of Bulwark brings back the applied routes and interface address, never edits stored but not applied', { skip, timeout: 240_000 }, async () => {
  const APPLIED = '198.51.100.0/24';
  const PENDING = '192.0.2.0/24';
  const routeOf = (destination: string) => inNamespace(fw, 'ip', ['-4', 'route', 'show', destination]).trim();
  lab.call('PUT', `/api/v1/interfaces/config/${link}`, { ipv4_mode: 'static', ipv4_address: '10.36.0.1/24' });
  const route = lab.call('POST', '/api/v1/routes', { destination: APPLIED, gateway: '10.36.0.2', interface: link });
  assert.match(routeOf(APPLIED), /via 10\.36\.0\.2/);

  // Bulwark stops; the kernel forgets what Bulwark put there (as at a reboot).
  await lab.stopBulwark('SIGTERM');
  inNamespace(fw, 'ip', ['route', 'del', APPLIED]);
  inNamespace(fw, 'ip', ['address', 'flush', 'dev', link]);
  // Stored but never applied: the commit of a write whose kernel step never ran (the API killed between the two)
  // — another gateway for the applied route, a new route, another address.
  const db = openDatabase(lab.dataDir);
  const store = new ConfigStore(db, systemClock);
  const stored = store.get('static_route', route.id)!;
  store.update('static_route', route.id, { ...stored.data, gateway: '10.36.0.3' });
  store.insert('static_route', { ...stored.data, destination: PENDING, gateway: '10.36.0.3' });
  const iface = store.list('interface_config').find((o) => o.data.name === link)!;
  store.update('interface_config', iface.id, { ...iface.data, ipv4_address: '10.36.0.9/24' });
  db.close();

  lab.startBulwark(fw, port);
  const ready = await until(() => {
    const [status] = lab.api(['GET', '/api/v1/status']);
    return status.status === 200 && status.body.ready === true;
  }, 90_000);
  const [status] = lab.api(['GET', '/api/v1/status']);
  assert.ok(ready, `/status ready after the start: ${JSON.stringify(status.body.services)}\n${lab.log}`);
  const networking = status.body.services.find((s: { name: string }) => s.name === 'networking');
  assert.deepEqual(networking && [networking.enabled, networking.running, networking.error], [true, true, null], JSON.stringify(status.body.services));
  assert.match(routeOf(APPLIED), /via 10\.36\.0\.2/, 'the applied route is back, with its applied gateway');
  assert.equal(routeOf(PENDING), '', 'the route stored but never applied stays out of the kernel');
  assert.deepEqual(kernelAddresses(), ['10.36.0.1/24'], 'the applied address is back, not the stored one');

  // Applying makes the stored configuration the applied one.
  lab.call('POST', '/api/v1/reload');
  assert.match(routeOf(PENDING), /via 10\.36\.0\.3/);
  assert.match(routeOf(APPLIED), /via 10\.36\.0\.3/);
  for (const object of lab.call('GET', '/api/v1/routes')) lab.call('DELETE', `/api/v1/routes/${object.id}`, undefined, 204);
});
