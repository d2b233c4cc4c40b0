import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { json } from './helpers/app.js';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';
import { GeoDatabase } from '../src/areas/geoip/database.js';
import { compileGeoIp, geoIpVerdict } from '../src/compile/geoip-sets.js';
import { compileNftables } from '../src/compile/nftables.js';
import { compilePf } from '../src/compile/pf.js';
import { runCommand } from '../src/platform/exec.js';
import { config, rule } from './helpers/firewall-fixtures.js';

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

test('geo-IP sets: countries of one action merged into the fewest intervals; a country both blocked and allowed is blocked', () => {
  const ranges: Record<string, { v4: [bigint, bigint][]; v6: [bigint, bigint][] }> = {
    AA: { v4: [[10n, 19n], [40n, 49n]], v6: [] },
    BB: { v4: [[20n, 29n]], v6: [[1n << 100n, (1n << 100n) + 255n]] },
    CC: { v4: [[60n, 69n]], v6: [] },
  };
  const geo = compileGeoIp([
    { id: '1', country: 'AA', action: 'block', status: 'active' },
    { id: '2', country: 'BB', action: 'block', status: 'active' },
    { id: '3', country: 'CC', action: 'allow', status: 'active' },
    { id: '4', country: 'AA', action: 'allow', status: 'active' },
    { id: '5', country: 'BB', action: 'allow', status: 'disabled' },
  ], (country) => ranges[country]);
  assert.deepEqual(geo.sets.map((s) => [s.action, s.family, s.countries.join(','), s.intervals.map((i) => `${i.first}-${i.last}`).join(' ')]), [
    ['block', 4, 'AA,BB', '10-29 40-49'],
    ['block', 6, 'AA,BB', `${1n << 100n}-${(1n << 100n) + 255n}`],
    ['allow', 4, 'CC', '60-69'],
  ]);
});

test('geo-IP sets from the shipped data: membership by binary search, rendered before user rules in nftables and pf', async () => {
  const database = new GeoDatabase();
  const geo = compileGeoIp([{ id: '1', country: 'GB', action: 'block', status: 'active' }, { id: '2', country: 'DE', action: 'allow', status: 'active' }], (c) => database.ranges(c));
  assert.equal(geoIpVerdict(geo, '81.2.69.142'), 'block');
  assert.equal(geoIpVerdict(geo, '2a00:1450:4001:81b::200e'), 'allow');
  assert.equal(geoIpVerdict(geo, '8.8.8.8'), null);
  assert.equal(geoIpVerdict(geo, '10.0.0.1'), null);
  const user = rule({ action: 'pass', protocol: 'tcp', dport: 22 });
  const nft = compileNftables(config({ rules: [user], geoip: geo })).text;
  assert.match(nft, /\tset geoip_block_v4 \{\n\t\ttype ipv4_addr\n\t\tflags interval\n\t\telements = \{ [0-9.\/ ,-]+ \}\n/);
  assert.match(nft, /\tchain geoip \{\n\t\tip saddr @geoip_block_v4 drop comment "geoip-block"\n\t\tip6 saddr @geoip_block_v6 drop comment "geoip-block"\n\t\tip saddr @geoip_allow_v4 accept comment "geoip-allow"\n/);
  // user rules live in segment chains the hooked chain jumps to, after the geo-IP chain
  const filterIn = nft.slice(nft.indexOf('chain filter_in {'));
  assert.ok(nft.includes(`chain in_${user.id} {`), 'the user rule has its segment');
  assert.ok(filterIn.indexOf('jump geoip') > 0 && filterIn.indexOf('jump geoip') < filterIn.indexOf(`jump in_${user.id}`), 'geo-IP is evaluated before user rules');
  assert.equal(compileNftables(config({ rules: [user] })).text.includes('geoip'), false, 'no geo-IP rule, nothing rendered');
  if (process.getuid?.() === 0) {
    const checked = await runCommand('nft', ['-c', '-f', '-'], { input: nft });
    assert.equal(checked.code, 0, checked.stderr);
  }
  const pf = compilePf(config({ rules: [user], geoip: geo })).text;
  assert.match(pf, /^table <geoip_block> persist \{\n  [0-9a-f.:]+\/\d+, /m);
  assert.ok(pf.indexOf('block drop in quick from <geoip_block> label "geoip-block"') < pf.indexOf('pass in quick from <geoip_allow> label "geoip-allow"'));
  assert.ok(pf.indexOf('pass in quick from <geoip_allow>') < pf.indexOf(`"${user.id}"`), 'before user rules');
});

test('a geo-IP rule change reloads a loaded ruleset; POST /geoip/refresh re-reads the data and reports the sets', async () => {
  const reload = await t.request('POST', '/api/v1/reload');
  assert.equal(reload.statusCode, 200, reload.body);
  const created = json(await t.request('POST', '/api/v1/geoip', { country_code: 'GB', action: 'block' }));
  const loaded = () => (t.app.context.platform.packetFilter as unknown as { appliedText: string }).appliedText;
  assert.match(loaded(), /set geoip_block_v4 \{/, 'the ruleset in force has the geo set');
  const refreshed = json(await t.request('POST', '/api/v1/geoip/refresh'));
  assert.ok(refreshed.countries > 200);
  assert.deepEqual(refreshed.sets.map((s: { name: string }) => s.name), ['geoip_block_v4', 'geoip_block_v6']);
  assert.ok(refreshed.sets[0].elements > 100);
  assert.equal((await t.request('DELETE', `/api/v1/geoip/${created.id}`)).statusCode, 204);
  assert.doesNotMatch(loaded(), /geoip_block/, 'deleting the rule reloads without it');
});
