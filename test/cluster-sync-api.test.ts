/**
 * Configuration sync's refusals on one node (issue 39 item 3): before pairing every sync route answers 412 and the
 * status says `unpaired`; pairing needs the HTTPS listener; the pairing call is taken over HTTPS only and with the
 * open code; a pairing code is shown once with this node's certificate pin.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adminApi } from './helpers/admin-api.js';
import { freePort } from './helpers/free-port.js';
import { startAreaApp } from './helpers/area-app.js';
import { areaOf } from './helpers/areas.js';
import type { Area } from '../src/areas/area.js';
import { createInboundKey } from '../src/areas/cluster/sync-keys.js';
import type { ClusterSync } from '../src/areas/cluster/sync-service.js';
import type { AcmeService } from '../src/areas/acme/service.js';
import type { DhcpService } from '../src/areas/dhcp/service.js';
import { renderKea } from '../src/render/kea/kea.js';
import { assertGolden } from './helpers/golden.js';
import { networkInterfaces } from 'node:os';

const api = adminApi();

test('an unpaired node: status unpaired, every sync route 412, no HTTPS listener means no pairing', async () => {
  const status = await api.call('GET', '/api/v1/cluster/status');
  assert.equal(status.status, 200);
  assert.equal(status.body.config_sync.state, 'unpaired');
  assert.deepEqual(await api.call('GET', '/api/v1/cluster/nodes').then((r) => r.body), []);
  for (const [method, path] of [['GET', '/api/v1/cluster/snapshot'], ['GET', '/api/v1/cluster/snapshot/hash'], ['GET', '/api/v1/cluster/sync/state'], ['POST', '/api/v1/cluster/sync/push'], ['POST', '/api/v1/cluster/snapshot/force']] as const) {
    const answer = await api.call(method, path);
    assert.equal(answer.status, 412, `${method} ${path}: ${JSON.stringify(answer.body)}`);
    assert.match(answer.body.error, /not paired/);
  }
  const put = await api.t.app.inject({ method: 'PUT', url: '/api/v1/cluster/snapshot', headers: api.headers, payload: {} });
  assert.equal(put.statusCode, 412);
  const code = await api.call('POST', '/api/v1/cluster/pairing-code');
  assert.equal(code.status, 412, JSON.stringify(code.body));
  assert.match(code.body.error, /--tls-listen/);
});

test('with HTTPS: the code is shown with the pin; the pairing call is refused over plain HTTP and with a wrong code', { timeout: 120_000 }, async () => {
  const t = await startAreaApp({ config: { tlsListen: { host: '127.0.0.1', port: await freePort() } } });
  try {
    const headers = t.headers;
    const opened = await t.app.inject({ method: 'POST', url: '/api/v1/cluster/pairing-code', headers });
    assert.equal(opened.statusCode, 201, opened.body);
    const { code, fingerprint } = opened.json();
    assert.match(fingerprint, /^[0-9a-f]{64}$/);
    const call = { code, name: 'node-a', port: 8443, fingerprint, key: 'bwk_x', pair_secret: 'a'.repeat(64) };
    // inject is not a TLS connection: the code must never travel in clear.
    const plain = await t.app.inject({ method: 'POST', url: '/api/v1/cluster/pairing', payload: call });
    assert.equal(plain.statusCode, 403, plain.body);
    assert.match(plain.json().error, /over HTTPS only/);
    const missing = await t.app.inject({ method: 'POST', url: '/api/v1/cluster/pairing', payload: { ...call, pair_secret: 'short' } });
    assert.equal(missing.statusCode, 400);
    assert.match(missing.json().error, /pair_secret/);
    assert.deepEqual((await t.app.inject({ url: '/api/v1/cluster/nodes', headers })).json(), []);
  } finally {
    await t.close();
  }
});

test('in_sync only while the peer holds the current head: a version applied here since the peer was last seen holding one reads peer_behind', async () => {
  const t = await startAreaApp();
  try {
    const headers = t.headers;
    const { sync } = areaOf<Area & { sync: ClusterSync }>(t.app, 'cluster-sync');
    // No 10 s comparison with a peer that does not exist (it would mark it unreachable); a standalone node pushes nothing.
    await sync.stop();
    const request = (method: 'GET' | 'POST', url: string, payload?: object) => t.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
    const applyRule = async (port: number) => {
      assert.equal((await request('POST', '/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: port })).statusCode, 201);
      assert.equal((await request('POST', '/api/v1/reload')).statusCode, 200);
    };
    await applyRule(2001);
    const { sealer } = t.app.context;
    // A pair with both keys (a pair without one reads no_key, whatever the histories say).
    const inbound = createInboundKey(t.app.context, '00000000-0000-4000-8000-000000000001', 'test');
    sync.state.setPeer({
      id: '00000000-0000-4000-8000-000000000001', name: 'node-b', address: '127.0.0.1', port: 9, fingerprint: 'ab'.repeat(32),
      outbound_key: sealer.seal('bwk_test'), pair_secret: sealer.seal('c'.repeat(64)), inbound_key_id: inbound.id, created_at: new Date(t.clock.now()).toISOString(), created_by: 'test',
    });
    const configSync = async () => (await request('GET', '/api/v1/cluster/status')).json().config_sync;
    const head = (await configSync()).local;
    // As a push that the peer answered holding this head records it.
    sync.state.updateState({ reachable: true, relation: 'same', peer_head: { seq: head.seq, hash: head.hash, link: head.link } });
    assert.equal((await configSync()).state, 'in_sync');
    await applyRule(2002);
    const after = await configSync();
    assert.equal(after.local.seq, head.seq + 1, 'the apply is one more version of the history');
    assert.equal(after.state, 'peer_behind', 'the peer holds the older head');
    assert.equal((await request('GET', '/api/v1/cluster/nodes')).json()[0].sync_state, 'peer_behind');
  } finally {
    await t.close();
  }
});

test('ACME renewal runs on the primary only: the backup of a pair renews nothing on schedule and refuses renew-now (409); the primary renews', async () => {
  const t = await startAreaApp();
  try {
    const headers = t.headers;
    const { sync } = areaOf<Area & { sync: ClusterSync }>(t.app, 'cluster-sync');
    const { service: acme } = areaOf<Area & { service: AcmeService }>(t.app, 'acme');
    await sync.stop();
    const request = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => t.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
    // The CA is a blocked address: an attempt is recorded (and fails at the outbound guard), which is what is looked for.
    assert.equal((await request('POST', '/api/v1/acme/account', { contact_email: 'ha@example.org', directory_url: 'https://127.0.0.1:9/directory', http01_listen: `127.0.0.1:${await freePort()}` })).statusCode, 200);
    const cert = (await request('POST', '/api/v1/acme/certs', { common_name: 'ha.example.org', challenge_type: 'http-01' })).json();
    const attempt = async () => (await request('GET', `/api/v1/acme/certs/${cert.id}`)).json().last_renew_attempt;
    const { sealer } = t.app.context;
    const peerId = '00000000-0000-4000-8000-000000000002';
    sync.state.setPeer({
      id: peerId, name: 'node-a', address: '127.0.0.1', port: 9, fingerprint: 'ab'.repeat(32), outbound_key: sealer.seal('bwk_test'), pair_secret: sealer.seal('c'.repeat(64)),
      inbound_key_id: createInboundKey(t.app.context, peerId, 'test').id, created_at: new Date(t.clock.now()).toISOString(), created_by: 'test',
    });
    assert.equal((await request('PUT', '/api/v1/cluster/role', { role: 'secondary' })).statusCode, 200);
    assert.deepEqual(acme.dueForRenewal(), [cert.id], 'the certificate is due');
    assert.equal(await acme.renewDue(), 0);
    assert.equal(await attempt(), null, 'the backup placed no order');
    const now = await request('POST', `/api/v1/acme/certs/${cert.id}/renew`);
    assert.equal(now.statusCode, 409, now.body);
    assert.match(now.json().error, /backup of a high-availability pair: the primary renews/);
    assert.equal(await attempt(), null);
    assert.equal((await request('PUT', '/api/v1/cluster/role', { role: 'primary' })).statusCode, 200);
    await acme.renewDue();
    assert.notEqual(await attempt(), null, 'the primary renews on schedule');
  } finally {
    await t.close();
  }
});

test('dhcp_link: Kea HA peers are the cluster nodes (this node by its role on its sync address, the partner at the pairing address); golden', async () => {
  const t = await startAreaApp();
  try {
    const headers = t.headers;
    const { sync } = areaOf<Area & { sync: ClusterSync }>(t.app, 'cluster-sync');
    const { service: dhcp } = areaOf<Area & { service: DhcpService }>(t.app, 'dhcp');
    await sync.stop();
    const request = (method: 'PUT', url: string, payload: object) => t.app.inject({ method, url, headers, payload });
    // The stored relationship as configuration sync copies it to both nodes alike (the other node's addresses).
    assert.equal((await request('PUT', '/api/v1/dhcp/ha/config', { mode: 'hot-standby', peer: '192.0.2.2:8001', listen: '192.0.2.1:8001', node_id: 2 })).statusCode, 200);
    assert.equal((await request('PUT', '/api/v1/cluster/pfsync', { sync_interface: 'lo', sync_peer: '127.0.0.2', enabled: false, dhcp_link: true })).statusCode, 200);
    assert.equal((await request('PUT', '/api/v1/cluster/role', { role: 'primary' })).statusCode, 200);
    const relationship = () => JSON.parse(renderKea(dhcp.input())).Dhcp4['hooks-libraries'].at(-1).parameters['high-availability'][0];
    assert.throws(relationship, /dhcp_link: is set but this node is not paired/);
    const { sealer } = t.app.context;
    const peerId = '00000000-0000-4000-8000-000000000003';
    sync.state.setPeer({
      id: peerId, name: 'node-b', address: '127.0.0.2', port: 9, fingerprint: 'ab'.repeat(32), outbound_key: sealer.seal('bwk_test'), pair_secret: sealer.seal('c'.repeat(64)),
      inbound_key_id: createInboundKey(t.app.context, peerId, 'test').id, created_at: new Date(t.clock.now()).toISOString(), created_by: 'test',
    });
    // The data directory's paths vary per run: fixed ones for the golden file.
    assertGolden('kea-dhcp4-ha-cluster-linked.json', renderKea({ ...dhcp.input(), paths: { leaseFile: '/var/lib/kea/kea-leases4.csv', controlSocket: '/run/kea/kea4-ctrl.sock' } }));
    const nodes = (await t.app.inject({ url: '/api/v1/cluster/nodes', headers })).json() as { address: string }[];
    const own = networkInterfaces().lo!.find((entry) => entry.family === 'IPv4')!.address;
    const asPrimary = relationship();
    assert.equal(asPrimary['this-server-name'], 'node1');
    assert.deepEqual(asPrimary.peers.map((peer: { url: string }) => peer.url), [`http://${own}:8001/`, ...nodes.map((node) => `http://${node.address}:8001/`)], 'the rendered peers are this node and the cluster node');
    assert.equal((await request('PUT', '/api/v1/cluster/role', { role: 'secondary' })).statusCode, 200);
    const asSecondary = relationship();
    assert.equal(asSecondary['this-server-name'], 'node2');
    assert.deepEqual(asSecondary.peers.map((peer: { url: string; role: string }) => [peer.url, peer.role]), [[`http://${nodes[0].address}:8001/`, 'primary'], [`http://${own}:8001/`, 'standby']]);
    assert.equal((await request('PUT', '/api/v1/cluster/pfsync', { sync_interface: 'lo', sync_peer: '127.0.0.2', enabled: false, dhcp_link: false })).statusCode, 200);
    assert.deepEqual(relationship().peers.map((peer: { url: string }) => peer.url), ['http://192.0.2.2:8001/', 'http://192.0.2.1:8001/'], 'without dhcp_link the stored addresses');
  } finally {
    await t.close();
  }
});

test('a refusal no caller words still answers 409 naming the field: a DHCP apply with dhcp_link on an unpaired node (was a 500)', async () => {
  assert.equal((await api.call('PUT', '/api/v1/dhcp/ha/config', { mode: 'hot-standby', peer: '192.0.2.2:8001', listen: '192.0.2.1:8001', node_id: 2 })).status, 200);
  assert.equal((await api.call('PUT', '/api/v1/cluster/pfsync', { sync_interface: 'lo', sync_peer: '127.0.0.2', enabled: false, dhcp_link: true })).status, 200);
  assert.equal((await api.call('PUT', '/api/v1/cluster/role', { role: 'primary' })).status, 200);
  const apply = await api.call('POST', '/api/v1/dhcp/v4/apply');
  assert.equal(apply.status, 409, JSON.stringify(apply.body));
  assert.deepEqual(apply.body, { error: 'cluster.pfsync.dhcp_link: is set but this node is not paired: pair it (POST /api/v1/cluster/nodes) or clear dhcp_link' });
});
