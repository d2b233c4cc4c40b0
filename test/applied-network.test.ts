/**
 * The networking applier's record of what it put into the kernel: a followed write changes exactly its own
 * object (a pending edit elsewhere in the store never enters the record that a start of Bulwark brings back).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { patchInterfaces, patchRoutes, patchVlans } from '../src/areas/networking/applied-network.js';

const route = (destination: string, gateway: string, table = 0) => ({ destination, gateway, interface: null, metric: 0, table });
const vlan = (id: number, parent = 'eth1') => ({ device: `vlan${id}`, parent, vlan_id: id, mtu: 1500 });

test('a followed route write replaces, adds or withdraws only its own route', () => {
  const held = [route('10.1.0.0/16', '192.0.2.1'), route('10.2.0.0/16', '192.0.2.1')];
  assert.deepEqual(patchRoutes(held, route('10.1.0.0/16', '192.0.2.1'), route('10.1.0.0/16', '192.0.2.9')), [route('10.2.0.0/16', '192.0.2.1'), route('10.1.0.0/16', '192.0.2.9')]);
  assert.deepEqual(patchRoutes(held, null, route('10.3.0.0/16', '192.0.2.1')), [...held, route('10.3.0.0/16', '192.0.2.1')]);
  assert.deepEqual(patchRoutes(held, route('10.2.0.0/16', '192.0.2.1'), null), [held[0]]);
  // Another table is another route.
  assert.deepEqual(patchRoutes(held, null, route('10.1.0.0/16', '192.0.2.5', 100)), [...held, route('10.1.0.0/16', '192.0.2.5', 100)]);
});

test('a followed VLAN write changes only its own device; an interface setting replaces only that interface', () => {
  assert.deepEqual(patchVlans([vlan(10), vlan(20)], vlan(10), vlan(10, 'eth2')), [vlan(20), vlan(10, 'eth2')]);
  assert.deepEqual(patchVlans([vlan(10)], vlan(10), null), []);
  const held = [{ name: 'eth1', data: { ipv4_address: '10.0.0.1/24' } }, { name: 'eth2', data: { mtu: 9000 } }];
  assert.deepEqual(patchInterfaces(held, 'eth1', { ipv4_address: '10.0.0.2/24' }), [held[1], { name: 'eth1', data: { ipv4_address: '10.0.0.2/24' } }]);
});
