/**
 * Host settings on the simulated platform: rendered into the data directory and every answer says so; the
 * state-table timeouts are validated and answered in configured/live fields; a refused change (409) is not
 * stored (sections are put in force before they are stored).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { json } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';
import { createSimulatedPlatform } from '../../src/platform/simulated/index.js';
import type { HostBanner } from '../../src/platform/host-settings.js';

let t: AreaApp;
before(async () => {
  t = await startAreaApp();
});
after(() => t.close());

test('pf-tuning: timeouts validated (400 naming the field, an empty body refused), stored, answered as configured and live, rendered as a sysctl file', async () => {
  assert.equal((await t.request('PUT', '/api/v1/settings/pf-tuning', {})).statusCode, 400);
  assert.match(json(await t.request('PUT', '/api/v1/settings/pf-tuning', { udp: 0 })).error, /body\.udp/);
  assert.match(json(await t.request('PUT', '/api/v1/settings/pf-tuning', { tcp_established: 'long' })).error, /body\.tcp_established/);
  assert.match(json(await t.request('PUT', '/api/v1/settings/pf-tuning', { udp: 45, bogus: 1 })).error, /bogus/);
  const answer = json(await t.request('PUT', '/api/v1/settings/pf-tuning', { udp: 45, icmp: 20 }));
  assert.deepEqual(answer.configured_timeouts, { tcp_established: null, udp: 45, udp_stream: null, icmp: 20 });
  assert.equal(answer.live_timeouts.udp, 45);
  assert.equal(answer.configured_max_states, 100000);
  assert.match(answer.warning, /simulated platform: rendered into the data directory/);
  assert.equal(readFileSync(join(t.dataDir, 'system', 'sysctl-state-table.conf'), 'utf8'),
    '# Rendered by Bulwark (/settings/pf-tuning)\nnet.netfilter.nf_conntrack_udp_timeout = 45\nnet.netfilter.nf_conntrack_icmp_timeout = 20\n');
  const kept = json(await t.request('PUT', '/api/v1/settings/pf-tuning', { max_states: 50000 }));
  assert.deepEqual([kept.configured_max_states, kept.configured_timeouts.udp], [50000, 45], 'fields not sent are kept');
});

test('PUT /dns on simulated says where the file went; a refused SSH change is not stored', async () => {
  const dns = json(await t.request('PUT', '/api/v1/dns', { servers: ['192.0.2.1'] }));
  assert.match(dns.message, /^DNS configuration updated: rendered into .*dns\/resolv\.conf \(simulated platform/);
  const port = t.app.context.config.port;
  const refused = await t.request('PUT', '/api/v1/system/ssh', { port });
  assert.equal(refused.statusCode, 409, refused.body);
  assert.match(json(refused).error, /API's own port/);
  assert.equal(json(await t.request('GET', '/api/v1/system/ssh')).port, 22, 'the refused port was not stored');
});

test('a conditional PUT answered 412 after the host was changed (the configuration moved during the wait) puts the previous values back in force', async () => {
  // A simulated platform whose banner apply waits for the test, recording what it was asked to put in force.
  const platform = createSimulatedPlatform();
  const asked: HostBanner[] = [];
  let release: () => void = () => undefined;
  let gate: Promise<void> = Promise.resolve();
  const hostSettings = platform.hostSettings.bind(platform);
  const app = await startAreaApp({
    platform: {
      ...platform,
      hostSettings: (site) => {
        const host = hostSettings(site);
        return { ...host, banner: async (desired) => { asked.push(desired); await gate; return host.banner(desired); } };
      },
    },
  });
  try {
    await app.request('PUT', '/api/v1/system/banner', { motd: 'first' });
    const tag = String((await app.request('GET', '/api/v1/system/banner')).headers.etag);
    gate = new Promise<void>((resolve) => (release = resolve));
    const conditional = app.app.inject({ method: 'PUT', url: '/api/v1/system/banner', headers: { ...app.headers, 'if-match': tag }, payload: { motd: 'second' } });
    for (let waited = 0; asked.length < 2 && waited < 15_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(asked.at(-1)?.motd, 'second', 'the host is being changed');
    // Another write lands while the host is being changed.
    assert.equal((await app.request('PUT', '/api/v1/settings/syslog', { port: 1514 })).statusCode, 200);
    release();
    const answer = await conditional;
    assert.equal(answer.statusCode, 412, answer.body);
    assert.deepEqual(asked.map((banner) => banner.motd), ['first', 'second', 'first'], 'the previous banner was put back in force');
    assert.equal(json(await app.request('GET', '/api/v1/system/banner')).motd, 'first');
    assert.equal(readFileSync(join(app.dataDir, 'system', 'motd'), 'utf8'), 'first\n');
  } finally {
    release();
    await app.close();
  }
});
