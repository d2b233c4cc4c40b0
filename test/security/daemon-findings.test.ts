/**
 * Regression tests for the review findings about the DNS, DHCP and time daemons (issue 11): a caller with only
 * the area's permissions could make Unbound (or chrony) read any file and get its first line back in the 409
 * of an apply. Simulated platform; the checkers run where installed, and fake checkers on PATH stand in for a
 * checker whose output quotes another file.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { json } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';
import { headersWithPermissions, type Headers } from '../helpers/auth.js';
import type { AppContext } from '../../src/context.js';

const SECRET = 'TOP-SECRET-MARKER-7f3a9c';

let t: AreaApp;
let operator: Headers;
let secretFile: string;
before(async () => {
  t = await startAreaApp();
  // What an operator holds: the areas' permissions, not admin.
  operator = await headersWithPermissions(t.app, ['dns:read', 'dns:write', 'dhcp:read', 'dhcp:write', 'settings:read', 'settings:write'], t.headers);
  secretFile = join(t.dataDir, 'jwt-like.key');
  writeFileSync(secretFile, `${SECRET}\n`, { mode: 0o600 });
});
after(() => t.close());

const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
  t.app.inject({ method, url, headers: operator, ...(payload ? { payload } : {}) });

function store(app: FastifyInstance) {
  return (app as unknown as { context: AppContext }).context.store;
}

test('custom_options with a second keyword (include of a key file) on one line is a 400 naming the field and line', async () => {
  const response = await call('PUT', '/api/v1/dns/resolver/config', { custom_options: `edns-buffer-size: 1232 include: "${secretFile}"` });
  assert.equal(response.statusCode, 400, response.body);
  assert.match(json(response).error, /^body\.custom_options line 1: /);
  const unquoted = await call('PUT', '/api/v1/dns/resolver/config', { custom_options: `edns-buffer-size: 1232 include: ${secretFile}` });
  assert.equal(unquoted.statusCode, 400);
  assert.match(json(unquoted).error, /body\.custom_options line 1: only one keyword per line/);
});

test('custom_options refuses every directive that names a file, loads code, drops privileges or opens a clause', async () => {
  const refused = [
    'include: /x', 'include-toplevel: /x', 'directory: /', 'chroot: /', 'username: root', 'module-config: iterator',
    'python-script: /x.py', 'dynlib-file: /x.so', 'remote-control:', 'control-enable: yes', 'control-interface: 0.0.0.0',
    'auto-trust-anchor-file: /x', 'trust-anchor-file: /x', 'pidfile: /x', 'logfile: /x', 'tls-service-key: /x',
    'server:', 'forward-zone:', 'edns-buffer-size: "1232"', "edns-buffer-size: '1232'", 'edns-buffer-size: 1232 # x',
    'edns-buffer-size: big', 'harden-glue: maybe', 'so-rcvbuf: 4q', 'edns-buffer-size:1232', 'edns-buffer-size: 1\r',
    'edns-buffer-size: 1\u0000', 'no-such-option: yes',
  ];
  for (const [index, line] of refused.entries()) {
    const text = `harden-glue: yes\n${line}`;
    const response = await call('PUT', '/api/v1/dns/resolver/config', { custom_options: text });
    assert.equal(response.statusCode, 400, `${index}: ${JSON.stringify(line)} was accepted`);
    assert.match(json(response).error, /^body\.custom_options line 2: /, JSON.stringify(line));
  }
  const accepted = await call('PUT', '/api/v1/dns/resolver/config', { custom_options: '# tuning\n  edns-buffer-size: 1232\nso-rcvbuf: 4m\n\nharden-glue: yes' });
  assert.equal(accepted.statusCode, 200, accepted.body);
  await call('PUT', '/api/v1/dns/resolver/config', { custom_options: '' });
});

test('a TXT value with quotes, an apostrophe and include text renders as one escaped string', async () => {
  const value = `it's "quoted"; include: "${secretFile}" \\ end`;
  const created = await call('POST', '/api/v1/dns/resolver/hosts', { hostname: 'txt', domain: 'home.lan', record_type: 'TXT', value });
  assert.equal(created.statusCode, 201, created.body);
  await call('PUT', '/api/v1/dns/resolver/config', { enabled: true, listen_interfaces: ['127.0.0.1'], port: 15353 });
  const applied = await call('POST', '/api/v1/dns/resolver/apply');
  assert.equal(applied.statusCode, 200, applied.body);
  const lines = readFileSync(join(t.dataDir, 'dns', 'unbound.conf'), 'utf8').split('\n').filter((l) => l.includes('txt.home.lan.'));
  assert.equal(lines.length, 1);
  // One single-quoted token holding one double-quoted TXT string, every special byte a \DDD escape.
  assert.equal(lines[0], `    local-data: 'txt.home.lan. 300 IN TXT "it\\039s \\034quoted\\034\\059 include: \\034${secretFile.replace(/[^A-Za-z0-9 .,:=+\-_/@!?%&*~^|]/g, (c) => `\\${String(c.charCodeAt(0)).padStart(3, '0')}`)}\\034 \\092 end"'`);
  await call('DELETE', `/api/v1/dns/resolver/hosts/${json(created).id}`);
});

test('a stored custom_options with include (an old version restored) is refused by the renderer: 409 naming the field, no file content', async () => {
  const current = store(t.app).getSingleton('dns_resolver') ?? {};
  store(t.app).putSingleton('dns_resolver', { ...current, enabled: true, custom_options: `edns-buffer-size: 1232 include: "${secretFile}"` });
  try {
    const applied = await call('POST', '/api/v1/dns/resolver/apply');
    assert.equal(applied.statusCode, 409);
    assert.match(json(applied).error, /cannot be rendered: custom_options line 1/);
    assert.doesNotMatch(applied.body, new RegExp(SECRET));
    const check = await t.app.inject({ method: 'GET', url: '/api/v1/config/check', headers: t.headers });
    assert.doesNotMatch(check.body, new RegExp(SECRET));
    assert.match(check.body, /cannot be rendered: custom_options line 1/);
  } finally {
    store(t.app).putSingleton('dns_resolver', { ...current, custom_options: '' });
  }
});

test('a stored NTS certificate path with a newline and include is refused (400 on write, 409 when restored)', async () => {
  const hostile = `${join(t.dataDir, 'time', 'keys', 'server.crt')}\ninclude ${secretFile}`;
  const written = await call('PUT', '/api/v1/time/config', { nts_certificate: hostile });
  assert.equal(written.statusCode, 400);
  assert.match(json(written).error, /^body\.nts_certificate/);
  const outside = await call('PUT', '/api/v1/time/config', { nts_certificate: secretFile });
  assert.equal(outside.statusCode, 400, 'a path outside the NTS key folder is refused');
  const current = store(t.app).getSingleton('time_config') ?? {};
  store(t.app).putSingleton('time_config', { ...current, nts_enabled: true, nts_certificate: hostile, nts_private_key: secretFile });
  try {
    const applied = await call('POST', '/api/v1/time/apply');
    assert.equal(applied.statusCode, 409, applied.body);
    assert.match(json(applied).error, /nts_certificate/);
    assert.doesNotMatch(applied.body, new RegExp(SECRET));
  } finally {
    store(t.app).putSingleton('time_config', current);
  }
});

test('DHCP: a client_id, domain names and boot file name that could split Kea option data are 400', async () => {
  const cases: [string, object, RegExp][] = [
    ['/api/v1/dhcp/v4/config', { domain_name: 'lan, 1.2.3.4' }, /body\.domain_name/],
    ['/api/v1/dhcp/v4/config', { domain_search: ['a.example", "b'] }, /body\.domain_search\.0/],
    ['/api/v1/dhcp/v4/config', { boot_filename: 'x"\n' }, /body\.boot_filename/],
    ['/api/v1/dhcp/ddns', { enabled: true, forward_zone: 'x"; y' }, /body\.forward_zone/],
  ];
  for (const [url, payload, error] of cases) {
    const response = await call('PUT', url, payload);
    assert.equal(response.statusCode, 400, `${url} ${JSON.stringify(payload)}`);
    assert.match(json(response).error, error);
  }
  const reservation = await call('POST', '/api/v1/dhcp/v4/reservations', { mac_address: '', client_id: 'abc", "x', ip_address: '192.168.9.9' });
  assert.equal(reservation.statusCode, 400);
  assert.match(json(reservation).error, /body\.client_id/);
});

/** Fake checkers on PATH whose output quotes a secret file and refuses line 3 of the checked file. */
function fakeCheckers(): { dir: string; restore: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-fake-checkers-'));
  const quote = `echo "${secretFile}:1: error: syntax error near '${SECRET}'"`;
  const scripts: Record<string, string> = {
    'unbound-checkconf': `for last; do :; done; ${quote}; echo "$last:3: error: refused"; exit 1`,
    'kea-dhcp4': `for last; do :; done; if [ "$1" = "-t" ]; then ${quote}; echo "Syntax check failed with: $last:3.5-9: refused"; exit 1; fi; echo 2.2.0`,
    chronyd: `for last; do :; done; if [ "$1" = "-p" ]; then ${quote}; echo "Fatal error : Invalid directive at line 3 in file $last"; exit 1; fi; echo "chronyd (chrony) version 4.3"`,
  };
  for (const [name, body] of Object.entries(scripts)) {
    writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(dir, name), 0o755);
  }
  const previous = process.env.PATH;
  process.env.PATH = `${dir}:${previous ?? ''}`;
  return { dir, restore: () => { process.env.PATH = previous; rmSync(dir, { recursive: true, force: true }); } };
}

test('a refused apply answers 409 with the rendered line and keyword only, never the checker\'s words (DNS, DHCP, time)', async () => {
  const fake = fakeCheckers();
  try {
    await call('PUT', '/api/v1/dns/resolver/config', { enabled: true, custom_options: '' });
    for (const [url, label] of [['/api/v1/dns/resolver/apply', 'Unbound'], ['/api/v1/dhcp/v4/apply', 'Kea'], ['/api/v1/time/apply', 'chrony']] as const) {
      const applied = await call('POST', url);
      assert.equal(applied.statusCode, 409, `${url}: ${applied.body}`);
      const { error } = json(applied);
      assert.doesNotMatch(applied.body, new RegExp(SECRET), url);
      assert.doesNotMatch(applied.body, /syntax error|jwt-like/, url);
      assert.match(error, new RegExp(`^the rendered ${label} configuration was refused by (unbound-checkconf|kea-dhcp4|chronyd) at line 3 \\([A-Za-z0-9_-]+\\) of the rendered file`), url);
    }
    const check = await t.app.inject({ method: 'GET', url: '/api/v1/config/check', headers: t.headers });
    assert.doesNotMatch(check.body, new RegExp(SECRET));
    assert.match(check.body, /refused by unbound-checkconf at line 3/);
  } finally {
    fake.restore();
  }
  assert.equal(existsSync(fake.dir), false);
});
