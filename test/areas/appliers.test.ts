import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { json } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';
import type { Headers } from '../helpers/auth.js';

let t: AreaApp;
let headers: Headers;
before(async () => {
  t = await startAreaApp();
  headers = t.headers;
});
after(() => t.close());

const call: AreaApp['request'] = (method, url, payload) => t.request(method, url, payload);

test('DNS, DHCP and time are appliers of the whole configuration: checked by /config/check, applied by /reload', async () => {
  await call('PUT', '/api/v1/dns/resolver/config', { enabled: true });
  await call('PUT', '/api/v1/time/config', { enabled: true });
  const report = json(await call('GET', '/api/v1/config/check'));
  assert.equal(report.valid, true, JSON.stringify(report.errors));
  assert.ok(report.info.some((line: string) => /^dns: the Unbound configuration passes unbound-checkconf/.test(line)));
  assert.ok(report.info.some((line: string) => /^dhcp: the Kea configuration passes kea-dhcp4 -t/.test(line)));
  assert.ok(report.info.some((line: string) => /^time: the chrony configuration passes chronyd -p/.test(line)));
  const reload = await call('POST', '/api/v1/reload');
  assert.equal(reload.statusCode, 200, reload.body);
  assert.equal(json(await call('GET', '/api/v1/dns/resolver/status')).running, true, 'the reload started the enabled resolver');
  assert.equal(json(await call('GET', '/api/v1/time/status')).running, true);
  assert.equal(json(await call('GET', '/api/v1/dhcp/status')).running, false, 'DHCP stays off while disabled');

  await call('PUT', '/api/v1/time/config', { enabled: false });
  assert.equal((await call('POST', '/api/v1/reload')).statusCode, 200);
  assert.equal(json(await call('GET', '/api/v1/time/status')).running, false, 'a disabled service that runs is stopped by the reload');

  // Allowed by custom_options' grammar, refused by unbound-checkconf (slabs must be a power of 2).
  await call('PUT', '/api/v1/dns/resolver/config', { custom_options: 'msg-cache-slabs: 3' });
  const broken = json(await call('GET', '/api/v1/config/check'));
  assert.equal(broken.valid, false);
  assert.ok(broken.errors.some((line: string) => /dns: the rendered Unbound configuration was refused by unbound-checkconf at line \d+ \(msg-cache-slabs\)/.test(line)), JSON.stringify(broken.errors));
  assert.ok(!JSON.stringify(broken.errors).includes('power of 2'), 'the checker\'s own words stay in the server log');
  const refused = await call('POST', '/api/v1/reload');
  assert.equal(refused.statusCode, 409);
  assert.match(json(refused).error, /dns: .*unbound-checkconf/);
});
