/**
 * A value that slipped past validation (written by an older release, restored from an old backup) is still never
 * rendered as a directive: the renderer refuses it (409 naming the field) or leaves it out. The bad values are
 * put straight into the store; the render is triggered through the HTTP API.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { json } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';

let t: AreaApp;
before(async () => {
  t = await startAreaApp();
});
after(() => t.close());

const storeUpdate = (kind: string, id: string, patch: Record<string, unknown>) => {
  const object = t.app.context.store.get(kind, id)!;
  t.app.context.store.update(kind, id, { ...object.data, ...patch });
};

test('WireGuard: a stored endpoint or DNS value carrying a PostUp line refuses the render', async () => {
  const tunnel = json(await t.request('POST', '/api/v1/vpn/wg', { name: 'office', listen_port: 51820, address: '10.8.0.1/24', dns: '10.8.0.1' }));
  const peer = json(await t.request('POST', `/api/v1/vpn/wg/${tunnel.id}/peers`, { allowed_ips: 'auto', auto_generate_key: true }));
  storeUpdate('wg_peer', peer.id, { endpoint: 'peer.example.org:51820\nPostUp = touch /tmp/bulwark-pwned' });
  const started = await t.request('POST', `/api/v1/vpn/wg/${tunnel.id}/start`);
  assert.equal(started.statusCode, 409, started.body);
  assert.match(json(started).error, /endpoint/);
  const file = join(t.dataDir, 'wireguard', 'wg0.conf');
  assert.ok(!existsSync(file) || !readFileSync(file, 'utf8').includes('PostUp'));

  storeUpdate('wg_tunnel', tunnel.id, { dns: '10.8.0.1\nPostUp = touch /tmp/bulwark-pwned' });
  for (const format of ['json', 'conf', 'qr']) {
    const download = await t.request('GET', `/api/v1/vpn/wg/${tunnel.id}/peers/${peer.id}/config?format=${format}`);
    assert.equal(download.statusCode, 409, `${format}: ${download.body.slice(0, 200)}`);
    assert.ok(!download.body.includes('PostUp'));
  }
});

test('reverse proxy: a stored JSON body naming a users file refuses the apply', async () => {
  const created = json(await t.request('POST', '/api/v1/reverse-proxy/http/middlewares', { name: 'auth', middleware_type: 'basicAuth', config_json: '{"users":["a:$apr1$x"]}' }));
  storeUpdate('rp_http_middleware', created.id, { config_json: '{"usersFile":"/etc/shadow"}' });
  const applied = await t.request('POST', '/api/v1/reverse-proxy/apply');
  assert.equal(applied.statusCode, 409, applied.body);
  assert.match(json(applied).error, /config_json/);
  const file = join(t.dataDir, 'reverse-proxy', 'config.yaml');
  assert.ok(!existsSync(file) || !readFileSync(file, 'utf8').includes('/etc/shadow'));
});

test('multi-WAN: a stored interface name with a second rule in it refuses the apply', async () => {
  const instances = json(await t.request('GET', '/api/v1/multiwan/instances'));
  const gateway = json(await t.request('POST', '/api/v1/multiwan/gateways', { name: 'isp1', instance_id: instances[0].id, interface: 'eth1', next_hop: '192.0.2.1' }));
  const policy = json(await t.request('POST', '/api/v1/multiwan/policies', { priority: 10, name: 'p', action_kind: 'set_gateway', target_id: gateway.id, iface_in: 'eth0' }));
  storeUpdate('mw_policy', policy.id, { iface_in: 'eth0 all\npass quick all' });
  const applied = await t.request('POST', '/api/v1/multiwan/apply');
  assert.equal(applied.statusCode, 409, applied.body);
  assert.match(json(applied).error, /iface_in/);
  const anchors = await t.app.context.platform.routing.anchors();
  assert.ok(!Object.values(anchors).some((text) => text.includes('pass quick all')));
});

test('IDS: a stored rule that runs a Lua script is left out of bulwark.rules', async () => {
  const ruleset = json(await t.request('POST', '/api/v1/ids/rulesets', { name: 'custom', rule_format: 'suricata', rules_text: 'alert tcp any any -> any any (msg:"ok"; sid:1000001; rev:1;)' }));
  const [rule] = json(await t.request('GET', `/api/v1/ids/rules?ruleset_id=${ruleset.id}`));
  t.app.context.db.prepare('UPDATE ids_rules SET rule_text = ? WHERE id = ?').run('alert tcp any any -> any any (msg:"x"; lua:/tmp/evil.lua; sid:1000001; rev:1;)', rule.id);
  const reloaded = await t.request('POST', '/api/v1/ids/reload');
  assert.equal(reloaded.statusCode, 200, reloaded.body);
  assert.equal(readFileSync(join(t.dataDir, 'ids', 'bulwark.rules'), 'utf8'), '');
});

test('IPsec: a stored identity or proposal that would open a section refuses the swanctl.conf render, and the file in force stays', async () => {
  const body = { local_addr: '198.51.100.1', remote_addr: '203.0.113.9', protocol: 'esp', mode: 'tunnel', psk: 'stored-values-key-0001', remote_id: 'peer.example.org' };
  const created = await t.request('POST', '/api/v1/vpn/ipsec', { ...body, name: 'stored' });
  assert.equal(created.statusCode, 201, created.body);
  const sa = json(created);
  const file = join(t.dataDir, 'ipsec', 'swanctl', 'swanctl.conf');
  const before = readFileSync(file, 'utf8');
  for (const [field, value] of [['remote_id', 'x"\n  }\nconnections { evil { remote_addrs = 0.0.0.0/0'], ['esp_proposals', 'aes256gcm16" }\nsecrets {'], ['local_ts', ['10.0.0.0/8", "0.0.0.0/0']]] as const) {
    storeUpdate('ipsec_sa', sa.id, { [field]: value });
    const other = await t.request('POST', '/api/v1/vpn/ipsec', { ...body, name: `other-${field}` });
    assert.equal(other.statusCode, 409, other.body);
    assert.match(json(other).error, new RegExp(`ipsec SA ${sa.id}\\.${field}: the stored value cannot be written`));
    assert.equal(readFileSync(file, 'utf8'), before, 'the refused render wrote nothing');
    storeUpdate('ipsec_sa', sa.id, { [field]: field === 'local_ts' ? [] : field === 'remote_id' ? 'peer.example.org' : 'aes256gcm16' });
  }
});
