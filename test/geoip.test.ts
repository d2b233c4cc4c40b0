import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { json } from './helpers/app.js';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';

let t: AreaApp;
before(async () => {
  t = await startAreaApp();
});
after(() => t.close());

test('lookups of known addresses answer their country and the dataset network containing them', async () => {
  const cases: [string, string | null][] = [
    ['8.8.8.8', 'US'], ['81.2.69.142', 'GB'], ['2001:4860:4860::8888', 'US'], ['::ffff:81.2.69.142', 'GB'],
    ['2a00:1450:4001:81b::200e', 'DE'], ['10.0.0.1', null], ['127.0.0.1', null],
  ];
  for (const [ip, country] of cases) {
    const response = await t.request('GET', `/api/v1/geoip/lookup/${encodeURIComponent(ip)}`);
    assert.equal(response.statusCode, 200, ip);
    const body = json(response);
    assert.equal(body.country, country, ip);
    assert.equal(body.found, country !== null);
    if (country) {
      assert.ok(body.network, ip);
      const [net, prefix] = body.network.split('/');
      assert.ok(Number(prefix) > 0);
      assert.ok(net.includes(':') === ip.replace('::ffff:', '').includes(':'));
    } else {
      assert.equal(body.network, null);
    }
  }
  assert.equal(json(await t.request('GET', '/api/v1/geoip/lookup/81.2.69.142')).country_name, 'United Kingdom');
  assert.equal(json(await t.request('GET', '/api/v1/geoip/lookup/81.2.69.142')).network, '81.2.68.0/22');
  const bad = await t.request('GET', '/api/v1/geoip/lookup/not-an-ip');
  assert.equal(bad.statusCode, 400);
});

test('rules: create with normalisation, list ordered by country, update, validation, delete', async () => {
  const de = await t.request('POST', '/api/v1/geoip', { country_code: ' de ', action: 'DENY' });
  assert.equal(de.statusCode, 201, de.body);
  assert.equal(json(de).country, 'DE');
  assert.equal(json(de).action, 'block');
  assert.equal(json(de).status, 'active');
  assert.ok(json(de).cidr_count > 0);
  const at = json(await t.request('POST', '/api/v1/geoip', { country_code: 'at', action: 'pass' }));
  assert.equal(at.action, 'allow');
  assert.deepEqual(json(await t.request('GET', '/api/v1/geoip')).map((r: { country: string }) => r.country), ['AT', 'DE']);
  const updated = json(await t.request('PUT', `/api/v1/geoip/${at.id}`, { status: 'disabled' }));
  assert.equal(updated.status, 'disabled');
  assert.equal(updated.country, 'AT');
  for (const [payload, field] of [[{ country_code: 'XYZ', action: 'block' }, 'country_code'], [{ country_code: 'QQ', action: 'block' }, 'country_code'], [{ country_code: 'FR', action: 'maybe' }, 'action']] as const) {
    const response = await t.request('POST', '/api/v1/geoip', payload);
    assert.equal(response.statusCode, 400);
    assert.match(json(response).error, new RegExp(field));
  }
  assert.equal((await t.request('PUT', `/api/v1/geoip/${at.id}`, { status: 'paused' })).statusCode, 400);
  assert.equal((await t.request('DELETE', `/api/v1/geoip/${de.json().id}`)).statusCode, 204);
  assert.equal((await t.request('DELETE', `/api/v1/geoip/${de.json().id}`)).statusCode, 404);
  assert.equal(json(await t.request('GET', '/api/v1/geoip')).length, 1);
});
