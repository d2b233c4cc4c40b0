import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Resolver } from 'node:dns/promises';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { json } from '../helpers/app.js';
import { startAreaApp } from '../helpers/area-app.js';
import { systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';
import { runtimeRoot } from '../../src/platform/daemon-runtime.js';

const skipReason = () => systemSkip('the Unbound loopback test', { programs: ['unbound', 'unbound-control'] });

test('linux platform: the real Unbound runs the rendered configuration on loopback, answers host overrides and blocks, and stops', { skip: skipReason() }, async () => {
  const t = await startAreaApp({ config: { platform: 'linux' } });
  try {
    const headers = t.headers;
    const call = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => t.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
    const port = await freePort();
    // Loopback only, no forwarding and no DNSSEC: the test never leaves this machine.
    await call('PUT', '/api/v1/dns/resolver/config', { enabled: true, listen_interfaces: ['127.0.0.1'], port, forwarding_enabled: false, dnssec: false, rebind_protection: false });
    await call('POST', '/api/v1/dns/resolver/hosts', { hostname: 'nas', domain: 'home.lan', value: '192.168.1.10' });
    await call('POST', '/api/v1/dns/customblocks', { pattern: 'ads.example.com' });
    const applied = await call('POST', '/api/v1/dns/resolver/apply');
    assert.equal(applied.statusCode, 200, applied.body);
    assert.equal(json(applied).simulated, false);
    assert.equal(json(applied).running, true, JSON.stringify(json(applied)));
    const status = json(await call('GET', '/api/v1/dns/resolver/status'));
    assert.equal(status.running, true);
    assert.match(status.version, /unbound|Version/i);
    // What Unbound writes goes to the local log under the data directory too (docs/local-logs.md).
    const localLog = join(t.dataDir, 'logs', 'unbound.log');
    const logged = () => (existsSync(localLog) ? readFileSync(localLog, 'utf8') : '');
    for (const until = Date.now() + 10_000; !/unbound/.test(logged()) && Date.now() < until;) await new Promise((resolve) => setTimeout(resolve, 100));
    const daemonLines = json(await call('GET', '/api/v1/dns/resolver/logs?lines=50')) as unknown;
    assert.match(logged(), /unbound/, `the daemon's own lines: ${JSON.stringify(daemonLines)}`);

    const resolver = new Resolver({ timeout: 2000, tries: 3 });
    resolver.setServers([`127.0.0.1:${port}`]);
    let answer: string[] = [];
    for (let attempt = 0; attempt < 20 && answer.length === 0; attempt++) {
      answer = await resolver.resolve4('nas.home.lan').catch(async () => {
        await new Promise((resolve) => setTimeout(resolve, 150));
        return [];
      });
    }
    assert.deepEqual(answer, ['192.168.1.10']);
    await assert.rejects(resolver.resolve4('ads.example.com'), (error: NodeJS.ErrnoException) => error.code === 'ENOTFOUND');
    const stats = json(await call('GET', '/api/v1/dns/stats'));
    assert.equal(stats.simulated, false);
    assert.ok(stats.queries_total >= 2, `unbound-control counted ${stats.queries_total} queries`);
    assert.equal(stats.rpz.rules >= 1, true);
    const logs = json(await call('GET', '/api/v1/dns/resolver/logs'));
    assert.ok(Array.isArray(logs));

    const stopped = json(await call('POST', '/api/v1/dns/resolver/stop'));
    assert.equal(stopped.running, false);
    await assert.rejects(resolver.resolve4('nas.home.lan'));
  } finally {
    await t.close();
    // Unbound's runtime files live in the runtime tree, outside the data directory (src/platform/daemon-runtime.ts).
    rmSync(runtimeRoot({ dataDir: t.dataDir }), { recursive: true, force: true });
  }
});
