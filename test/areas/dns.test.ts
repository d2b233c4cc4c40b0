import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { json } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';
import type { Headers } from '../helpers/auth.js';
import { sharedFile } from '../helpers/shared.js';

let t: AreaApp;
let headers: Headers;
before(async () => {
  t = await startAreaApp();
  headers = t.headers;
});
after(() => t.close());

const call: AreaApp['request'] = (method, url, payload) => t.request(method, url, payload);

test('host overrides: create → list → update → delete, validation names the field', async () => {
  const created = await call('POST', '/api/v1/dns/resolver/hosts', { hostname: 'nas', domain: 'home.lan', value: '192.168.1.10' });
  assert.equal(created.statusCode, 201, created.body);
  const host = json(created);
  assert.equal(host.record_type, 'A');
  assert.equal(host.enabled, true);
  const listed = json(await call('GET', '/api/v1/dns/resolver/hosts'));
  assert.ok(listed.some((h: { id: string }) => h.id === host.id));
  const updated = await call('PUT', `/api/v1/dns/resolver/hosts/${host.id}`, { value: '192.168.1.11' });
  assert.equal(json(updated).value, '192.168.1.11');
  const bad = await call('POST', '/api/v1/dns/resolver/hosts', { hostname: 'x', domain: 'lan', record_type: 'AAAA', value: '10.0.0.1' });
  assert.equal(bad.statusCode, 400);
  assert.match(json(bad).error, /body\.value must be an IPv6 address/);
  const badName = await call('POST', '/api/v1/dns/resolver/hosts', { hostname: '-x', domain: 'lan', value: '10.0.0.1' });
  assert.match(json(badName).error, /body\.hostname/);
  assert.equal((await call('DELETE', `/api/v1/dns/resolver/hosts/${host.id}`)).statusCode, 204);
  assert.equal((await call('DELETE', `/api/v1/dns/resolver/hosts/${host.id}`)).statusCode, 404);
});

test('domain overrides and ACLs: CRUD, duplicates 409, bad values 400', async () => {
  const domain = json(await call('POST', '/api/v1/dns/resolver/domains', { domain: 'corp.example', server: '10.0.0.53:5353' }));
  assert.equal((await call('POST', '/api/v1/dns/resolver/domains', { domain: 'corp.example', server: '10.0.0.54' })).statusCode, 409);
  assert.match(json(await call('POST', '/api/v1/dns/resolver/domains', { domain: 'x.example', server: 'not-an-ip' })).error, /body\.server/);
  assert.equal(json(await call('PUT', `/api/v1/dns/resolver/domains/${domain.id}`, { server: '[2001:db8::53]:53' })).server, '[2001:db8::53]:53');
  const acl = await call('POST', '/api/v1/dns/resolver/acls', { network: '192.168.0.0/16', action: 'allow' });
  assert.equal(acl.statusCode, 201);
  assert.match(json(await call('POST', '/api/v1/dns/resolver/acls', { network: '192.168.0.0/99', action: 'allow' })).error, /body\.network/);
  assert.match(json(await call('POST', '/api/v1/dns/resolver/acls', { network: '10.0.0.0/8', action: 'permit' })).error, /body\.action must be one of/);
  const changed = await call('PUT', `/api/v1/dns/resolver/acls/${json(acl).id}`, { action: 'refuse' });
  assert.equal(json(changed).action, 'refuse');
  assert.equal((await call('DELETE', `/api/v1/dns/resolver/acls/${json(acl).id}`)).statusCode, 204);
  assert.equal((await call('DELETE', `/api/v1/dns/resolver/domains/${domain.id}`)).statusCode, 204);
});

test('resolver config: defaults, partial PUT, validation, pending until apply', async () => {
  const config = json(await call('GET', '/api/v1/dns/resolver/config'));
  assert.equal(config.port, 53);
  assert.deepEqual(config.forwarding_servers, ['1.1.1.1', '8.8.8.8']);
  assert.equal(config.msg_cache_size, '8m');
  const put = await call('PUT', '/api/v1/dns/resolver/config', { port: 15353, listen_interfaces: ['127.0.0.1'], msg_cache_size: 4194304, enabled: true });
  assert.equal(put.statusCode, 200, put.body);
  assert.equal(json(put).msg_cache_size, 4194304);
  assert.match(json(await call('PUT', '/api/v1/dns/resolver/config', { port: 70000 })).error, /body\.port/);
  assert.match(json(await call('PUT', '/api/v1/dns/resolver/config', { forwarding_servers: ['dns.google'] })).error, /body\.forwarding_servers\.0/);
  assert.match(json(await call('PUT', '/api/v1/dns/resolver/config', { custom_options: 'chroot: /' })).error, /body\.custom_options line 1: chroot is not allowed/);
  assert.equal(json(await call('GET', '/api/v1/dns/resolver/status')).pending, true);
});

test('apply renders unbound.conf, checks it with unbound-checkconf, starts the (simulated) resolver; stop and restart change state', async () => {
  await call('POST', '/api/v1/dns/resolver/hosts', { hostname: 'printer', domain: 'home.lan', value: '192.168.1.20' });
  await call('POST', '/api/v1/dns/resolver/hosts', { hostname: 'mail', domain: 'home.lan', record_type: 'MX', value: 'mx.home.lan', mx_priority: 5 });
  await call('POST', '/api/v1/dns/resolver/hosts', { hostname: 'txt', domain: 'home.lan', record_type: 'TXT', value: 'v=spf1 "quoted" -all' });
  await call('PUT', '/api/v1/dns/resolver/config', { enabled: true });
  const applied = await call('POST', '/api/v1/dns/resolver/apply');
  assert.equal(applied.statusCode, 200, applied.body);
  const report = json(applied);
  assert.equal(report.running, true);
  assert.equal(report.simulated, true);
  assert.equal(report.check.checked, true, 'unbound-checkconf is installed on this machine');
  assert.equal(report.check.ok, true, report.check.output);
  const rendered = readFileSync(join(t.dataDir, 'dns', 'unbound.conf'), 'utf8');
  assert.match(rendered, /local-data: "printer\.home\.lan\. 300 IN A 192\.168\.1\.20"/);
  assert.match(rendered, /port: 15353/);
  const status = json(await call('GET', '/api/v1/dns/resolver/status'));
  assert.equal(status.running, true);
  assert.equal(status.pending, false);
  assert.equal(status.last_switch_result, 'ok');
  assert.match(status.version, /simulated/);
  const stopped = json(await call('POST', '/api/v1/dns/resolver/stop'));
  assert.equal(stopped.running, false);
  assert.equal(json(await call('GET', '/api/v1/dns/resolver/status')).running, false);
  assert.equal(json(await call('POST', '/api/v1/dns/resolver/restart')).running, true);
  const logs = json(await call('GET', '/api/v1/dns/resolver/logs?search=started&lines=1'));
  assert.equal(logs.length, 1);
  assert.match(logs[0], /started/);
  const stats = json(await call('GET', '/api/v1/dns/stats'));
  assert.equal(stats.running, true);
  assert.ok(stats.queries_total > 0);
});

test('custom options that Unbound rejects make apply answer 409 naming the rendered line and keyword, and the running config is kept', async () => {
  const before = readFileSync(join(t.dataDir, 'dns', 'unbound.conf'), 'utf8');
  // Allowed by the grammar (a number), refused by unbound-checkconf (slabs must be a power of 2).
  await call('PUT', '/api/v1/dns/resolver/config', { custom_options: 'msg-cache-slabs: 3' });
  const applied = await call('POST', '/api/v1/dns/resolver/apply');
  assert.equal(applied.statusCode, 409);
  assert.match(json(applied).error, /refused by unbound-checkconf at line \d+ \(msg-cache-slabs\) of the rendered file/);
  assert.doesNotMatch(json(applied).error, /power of 2/, 'the checker\'s own words stay in the server log');
  assert.equal(readFileSync(join(t.dataDir, 'dns', 'unbound.conf'), 'utf8'), before);
  await call('PUT', '/api/v1/dns/resolver/config', { custom_options: '' });
});

/** The blocklist filter's data file of the installed unbound.conf (src/render/unbound/unbound-blocklist.ts). */
function filterData(): string {
  const config = readFileSync(join(t.dataDir, 'dns', 'unbound.conf'), 'utf8');
  const script = /python-script: "([^"]+)"/.exec(config)?.[1];
  assert.ok(script, 'unbound.conf loads the blocklist filter');
  const data = /^DATA_FILE = '([^']+)'$/m.exec(readFileSync(script, 'utf8'))![1];
  return readFileSync(data, 'utf8');
}

test('whitelist and custom blocks: list/create/delete, pattern validation, duplicates 409, rendered into the filter', async () => {
  const block = await call('POST', '/api/v1/dns/customblocks', { pattern: '*.ads.example.com', note: null });
  assert.equal(block.statusCode, 201, block.body);
  assert.equal((await call('POST', '/api/v1/dns/customblocks', { pattern: '*.ads.example.com' })).statusCode, 409);
  assert.match(json(await call('POST', '/api/v1/dns/customblocks', { pattern: 'nodot' })).error, /body\.pattern/);
  assert.match(json(await call('POST', '/api/v1/dns/whitelist', { pattern: 'bad-.example.com' })).error, /body\.pattern/);
  const allow = await call('POST', '/api/v1/dns/whitelist', { pattern: 'good.example.com', note: 'needed' });
  assert.equal(allow.statusCode, 201);
  // The resolver is running: the change re-renders the filter at once.
  const data = filterData();
  assert.match(data, /^zone\tcustom\tnxdomain\t-\t1$/m);
  assert.match(data, /^0\tads\.example\.com$/m);
  assert.match(data, /^allow\tgood\.example\.com$/m);
  assert.equal((await call('DELETE', `/api/v1/dns/customblocks/${json(block).id}`)).statusCode, 204);
  assert.equal(json(await call('GET', '/api/v1/dns/customblocks')).length, 0);
});

test('system nameservers: reads the host resolv.conf until set; PUT validates IPs', async () => {
  const host = json(await call('GET', '/api/v1/dns'));
  assert.equal(host.source, 'host');
  assert.ok(Array.isArray(host.servers));
  assert.match(json(await call('PUT', '/api/v1/dns', { servers: ['1.1.1.1', 'dns.example'] })).error, /body\.servers\.1/);
  assert.equal((await call('PUT', '/api/v1/dns', { servers: ['9.9.9.9'] })).statusCode, 200);
  assert.deepEqual(json(await call('GET', '/api/v1/dns')).servers, ['9.9.9.9']);
  assert.match(readFileSync(join(t.dataDir, 'dns', 'resolv.conf'), 'utf8'), /nameserver 9\.9\.9\.9/);
});

test('blocklist sources: 14 built-ins seeded disabled, CRUD, built-in delete is 409, schedule validation', async () => {
  const seeded = json(await call('GET', '/api/v1/dns/blocklists?built_in=true'));
  assert.equal(seeded.length, 14);
  assert.ok(seeded.every((s: { enabled: boolean; rule_count: number }) => !s.enabled && s.rule_count === 0));
  assert.equal((await call('DELETE', `/api/v1/dns/blocklists/${seeded[0].id}`)).statusCode, 409);
  const created = await call('POST', '/api/v1/dns/blocklists', { name: 'Mine', category: 'custom', url: 'https://lists.example.org/x.txt', format: 'domains' });
  assert.equal(created.statusCode, 201, created.body);
  const source = json(created);
  assert.equal(source.action, 'nxdomain');
  assert.equal(source.last_updated, null);
  assert.equal(json(await call('GET', `/api/v1/dns/blocklists/${source.id}`)).name, 'Mine');
  assert.equal((await call('POST', '/api/v1/dns/blocklists', { name: 'Mine', category: 'custom', url: 'https://a.example/x', format: 'domains' })).statusCode, 409);
  assert.match(json(await call('POST', '/api/v1/dns/blocklists', { name: 'L', category: 'c', url: 'ftp://x.example/l', format: 'domains' })).error, /body\.url must start/);
  assert.match(json(await call('POST', '/api/v1/dns/blocklists', { name: 'L', category: 'c', url: 'https://10.1.2.3/l', format: 'domains' })).error, /body\.url: 10\.1\.2\.3 .*\/api\/v1\/settings\/outbound/);
  assert.match(json(await call('POST', '/api/v1/dns/blocklists', { name: 'L', category: 'c', url: 'https://x.example/l', format: 'domains', action: 'redirect' })).error, /redirect_ip/);
  assert.match(json(await call('POST', '/api/v1/dns/blocklists', { name: 'L', category: 'c', url: 'https://x.example/l', format: 'domains', built_in: true })).error, /built_in/);
  assert.equal(json(await call('PUT', `/api/v1/dns/blocklists/${source.id}`, { category: 'ads' })).category, 'ads');
  assert.equal((await call('DELETE', `/api/v1/dns/blocklists/${source.id}`)).statusCode, 204);
  assert.match(json(await call('PUT', '/api/v1/dns/blocklists/schedule', { cron: '0 3 * * *' })).error, /invalid cron/);
  assert.match(json(await call('PUT', '/api/v1/dns/blocklists/schedule', { concurrency: 33 })).error, /body\.concurrency/);
  assert.equal(json(await call('PUT', '/api/v1/dns/blocklists/schedule', { cron: '0 30 4 * * *' })).cron, '0 30 4 * * *');
});

test('blocklist refresh downloads through the outbound guard: loopback refused unless allow-listed, lists parsed and rendered', async (context) => {
  const hosts = sharedFile('fixtures/dns-blocklists/hagezi/hosts_doh-vpn-proxy-bypass.txt');
  if (hosts.skip) return context.skip(hosts.skip);
  const body = readFileSync(hosts.path);
  const server: Server = createServer((request, response) => response.end(request.url === '/hosts.txt' ? body : 'nope'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  try {
    assert.equal(json(await call('PUT', '/api/v1/dns/blocklists/schedule', { allow_http: true })).allow_http, true);
    const off = json(await call('POST', '/api/v1/dns/blocklists/refresh-all'));
    assert.deepEqual(off, []);
    // A name that resolves to loopback: refused at connect time although the URL passed creation.
    const sneaky = json(await call('POST', '/api/v1/dns/blocklists', { name: 'sneaky', category: 'custom', url: `http://localhost:${port}/hosts.txt`, format: 'hosts' }));
    const turnedOn = json(await call('PUT', '/api/v1/dns/blocklists/enabled', { enabled: true }));
    assert.equal(turnedOn.enabled, true);
    const refused = turnedOn.refreshed.find((o: { source_id: string }) => o.source_id === sneaky.id);
    assert.equal(refused.ok, false);
    assert.match(refused.error, /resolves to .*blocked address/);
    assert.match(json(await call('GET', `/api/v1/dns/blocklists/${sneaky.id}`)).last_error, /blocked address/);
    // The admin allow-list admits the LAN mirror.
    // The schedule's own list may only repeat the administrator's (settings:write) outbound allow-list.
    assert.match(json(await call('PUT', '/api/v1/dns/blocklists/schedule', { allow_private_sources: ['127.0.0.1/32'] })).error, /body\.allow_private_sources: "127\.0\.0\.1\/32" is not on the administrator's outbound allow-list/);
    assert.equal((await call('PUT', '/api/v1/settings/outbound', { allowed_addresses: ['127.0.0.1/32'] })).statusCode, 200);
    assert.equal((await call('PUT', '/api/v1/dns/blocklists/schedule', { allow_private_sources: ['127.0.0.1/32'] })).statusCode, 200);
    const mirror = json(await call('POST', '/api/v1/dns/blocklists', { name: 'mirror', category: 'custom', url: `http://127.0.0.1:${port}/hosts.txt`, format: 'hosts' }));
    const outcome = json(await call('POST', `/api/v1/dns/blocklists/${mirror.id}/refresh`));
    assert.equal(outcome.ok, true, outcome.error);
    assert.equal(outcome.rule_count, 1205);
    assert.equal(outcome.bytes, body.length);
    const record = json(await call('GET', `/api/v1/dns/blocklists/${mirror.id}`));
    assert.equal(record.rule_count, 1205);
    assert.equal(record.last_sha256, outcome.sha256);
    assert.equal(typeof record.last_updated, 'number');
    const data = filterData();
    assert.match(data, new RegExp(`^zone\\tblocklist-${mirror.id}\\tnxdomain\\t-\\t1205$`, 'm'));
    assert.equal(json(await call('GET', `/api/v1/dns/blocklists/${mirror.id}`)).names_active, 1205);
    assert.equal(json(await call('GET', `/api/v1/dns/blocklists/${mirror.id}`)).last_result, 'ok');
    const stats = json(await call('GET', '/api/v1/dns/stats'));
    assert.ok(stats.rpz.rules >= 1205);
    assert.ok(stats.rpz.per_zone.some((zone: { name: string; rules: number }) => zone.name === `blocklist-${mirror.id}` && zone.rules === 1205));
    const again = json(await call('POST', `/api/v1/dns/blocklists/${mirror.id}/refresh`));
    assert.equal(again.sha256, outcome.sha256);
    const check = json(await call('POST', '/api/v1/dns/resolver/apply'));
    assert.equal(check.check.ok, true, check.check.output);
    const notFound = json(await call('POST', '/api/v1/dns/blocklists/00000000-0000-4000-8000-000000000000/refresh'));
    assert.deepEqual([notFound.ok, notFound.error], [false, 'source not found']);
    assert.equal(json(await call('PUT', '/api/v1/dns/blocklists/enabled', { enabled: false })).enabled, false);
    assert.equal(json(await call('GET', '/api/v1/dns/blocklists/enabled')).enabled, false);
    // Blocklisting off and no custom blocks left: Unbound runs without the filter.
    assert.doesNotMatch(readFileSync(join(t.dataDir, 'dns', 'unbound.conf'), 'utf8'), /python/);
    assert.equal(existsSync(join(t.dataDir, 'dns', 'lists', `${mirror.id}.txt`)), true, 'the downloaded copy is kept');
  } finally {
    server.close();
  }
});

test('the DNS stream (served by the dashboard) carries the resolver statistics of the DNS area', async () => {
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const controller = new AbortController();
  const response = await fetch(`${address}/api/v1/dns/stream`, { headers: { ...headers, accept: 'text/event-stream' }, signal: controller.signal });
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/);
  const reader = response.body!.getReader();
  let text = '';
  while (!/\n\n/.test(text.replace(/^(retry|:)[^\n]*\n+/gm, ''))) text += new TextDecoder().decode((await reader.read()).value);
  const block = text.split('\n\n').find((b) => /^id: /m.test(b))!;
  const event = JSON.parse(block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n'));
  assert.equal(event.type, 'stats');
  assert.equal(typeof event.data.queries_total, 'number', JSON.stringify(event));
  assert.ok('cache' in event.data && 'rpz' in event.data);
  controller.abort();
});
