import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { json } from './helpers/app.js';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';
import type { Headers } from './helpers/auth.js';
import { isWireguardKey, parseWgQuick, publicKeyOf, wgValue } from '../src/areas/vpn/wireguard.js';

let t: AreaApp;
let viewer: Headers;
let operator: Headers;
before(async () => {
  t = await startAreaApp();
  viewer = await personHeaders('vera', 'Viewer-pass1', 'viewer');
  operator = await personHeaders('otto', 'Operator-pass1', 'operator');
});
after(() => t.close());

async function personHeaders(username: string, password: string, role: string): Promise<Headers> {
  const created = await t.request('POST', '/api/v1/auth/users', { username, password, role });
  assert.equal(created.statusCode, 201, created.body);
  const login = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password } });
  assert.equal(login.statusCode, 200, login.body);
  return { authorization: `Bearer ${json(login).access_token as string}` };
}

const get = (url: string, headers: Headers) => t.app.inject({ method: 'GET', url, headers });

test('a peer configuration without key material for vpn:read; the private key and PSK only for vpn:write with include_keys=true', async () => {
  const tunnel = json(await t.request('POST', '/api/v1/vpn/wg', { name: 'keys', listen_port: 51910, address: '172.29.250.1/24', endpoint_host: 'vpn.example.org' }));
  const created = await t.request('POST', `/api/v1/vpn/wg/${tunnel.id}/peers`, { name: 'phone', allowed_ips: 'auto', auto_generate_key: true, preshared_key: 'generate' });
  assert.equal(created.statusCode, 201, created.body);
  const peer = json(created);
  const base = `/api/v1/vpn/wg/${tunnel.id}/peers/${peer.id}/config`;

  // What the owner of vpn:write gets: the real keys, the private key belonging to the peer.
  const keyed = await get(`${base}?include_keys=true`, operator);
  assert.equal(keyed.statusCode, 200, keyed.body);
  const [ownInterface, ownPeer] = parseWgQuick(json(keyed).full_tunnel);
  const privateKey = wgValue(ownInterface, 'PrivateKey')!;
  const presharedKey = wgValue(ownPeer, 'PresharedKey')!;
  assert.ok(isWireguardKey(privateKey) && isWireguardKey(presharedKey));
  assert.equal(publicKeyOf(privateKey), peer.public_key);

  // A viewer (and anyone not asking for keys) gets the same file without either key, in every format.
  for (const headers of [viewer, operator]) {
    for (const format of ['json', 'conf']) {
      const plain = await get(`${base}?format=${format}&variant=split`, headers);
      assert.equal(plain.statusCode, 200, plain.body);
      const texts = format === 'json' ? [json(plain).full_tunnel, json(plain).split_tunnel] : [plain.body];
      for (const text of texts as string[]) {
        assert.ok(!text.includes(privateKey) && !text.includes(presharedKey), text);
        const [iface, server] = parseWgQuick(text);
        assert.equal(wgValue(iface, 'PrivateKey'), '<paste-your-private-key-here>');
        assert.equal(wgValue(server, 'PresharedKey'), undefined);
        assert.equal(wgValue(server, 'PublicKey'), tunnel.public_key);
        assert.match(text, /^# PresharedKey: /m, 'the file says a preshared key is needed');
      }
    }
  }

  // A viewer asking for key material is refused, in every format, and learns nothing of it.
  for (const format of ['json', 'conf', 'qr']) {
    const refused = await get(`${base}?include_keys=true&format=${format}`, viewer);
    assert.equal(refused.statusCode, 403, refused.body);
    assert.match(json(refused).error, /vpn:write/);
    assert.ok(!refused.body.includes(privateKey));
  }
  assert.equal((await get(`${base}?include_keys=maybe`, operator)).statusCode, 400);
});
