import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';
import { mkdirSync, writeFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { SMTPServer } from 'smtp-server';
import { json } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';
import type { Headers } from '../helpers/auth.js';
import { trustedProxiesFromSettings } from '../../src/areas/settings/startup.js';

let t: AreaApp;
let headers: Headers;
before(async () => {
  t = await startAreaApp();
  headers = t.headers;
});
after(() => t.close());

const call: AreaApp['request'] = (method, url, payload) => t.request(method, url, payload);

test('TLS settings: policy defaults; certificate and key paths must be PEM files inside the data directory that could be served', async () => {
  assert.deepEqual(json(await call('GET', '/api/v1/settings/tls')), {
    min_version: 'tls12', block_expired: true, block_weak_keys: true, cert_path: '', key_path: '', acme_cert_id: '', http_redirect: false, hsts_max_age: 31536000,
  });
  assert.match(json(await call('PUT', '/api/v1/settings/tls', { cert_path: '/etc/ssl/certs/ca-certificates.crt', key_path: '/etc/shadow' })).error, /inside the data directory/);
  assert.match(json(await call('PUT', '/api/v1/settings/tls', { cert_path: '../outside.pem', key_path: 'k.pem' })).error, /inside the data directory/);
  mkdirSync(join(t.dataDir, 'tls'), { recursive: true });
  writeFileSync(join(t.dataDir, 'tls', 'api.crt'), '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
  writeFileSync(join(t.dataDir, 'tls', 'api.key'), '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n');
  assert.match(json(await call('PUT', '/api/v1/settings/tls', { cert_path: 'tls/api.key', key_path: 'tls/api.key' })).error, /cert_path.*not a PEM file/);
  // The files are what HTTPS will serve (test/https.test.ts): a PEM that does not parse is refused, not stored.
  const refused = await call('PUT', '/api/v1/settings/tls', { cert_path: 'tls/api.crt', key_path: join(t.dataDir, 'tls', 'api.key'), min_version: 'tls13' });
  assert.equal(refused.statusCode, 400, refused.body);
  assert.match(json(refused).error, /^body\.cert_path: the certificate is not a PEM X\.509 certificate/);
  const policy = await call('PUT', '/api/v1/settings/tls', { min_version: 'tls13' });
  assert.equal(json(policy).min_version, 'tls13');
  assert.match(json(await call('PUT', '/api/v1/settings/tls', { http_redirect: true })).error, /^body\.http_redirect needs the HTTPS listener/);
});

test('pf tuning and IDS alert retention', async () => {
  const pf = json(await call('GET', '/api/v1/settings/pf-tuning'));
  assert.deepEqual([pf.configured_max_states, pf.min_states, pf.max_states], [100000, 1000, 4000000]);
  assert.match(json(await call('PUT', '/api/v1/settings/pf-tuning', { max_states: 999 })).error, /body\.max_states/);
  assert.equal(json(await call('PUT', '/api/v1/settings/pf-tuning', { max_states: 250000 })).configured_max_states, 250000);
  assert.deepEqual(json(await call('GET', '/api/v1/settings/ids-alerts')), { max_mb: 64, max_age_secs: 86400 });
  assert.deepEqual(json(await call('PUT', '/api/v1/settings/ids-alerts', { max_mb: 4, max_age_secs: 10_000_000 })), { max_mb: 8, max_age_secs: 604800 });
});

test('syslog: validation, a test message reaches a local UDP listener in the configured format, status counts it', async () => {
  const listener = createSocket('udp4');
  const received = new Promise<string>((resolve) => listener.once('message', (message) => resolve(message.toString())));
  await new Promise<void>((resolve) => listener.bind(0, '127.0.0.1', resolve));
  const { port } = listener.address();
  try {
    assert.match(json(await call('PUT', '/api/v1/settings/syslog', { enabled: true })).error, /body\.host is required/);
    assert.match(json(await call('PUT', '/api/v1/settings/syslog', { facility: 24 })).error, /body\.facility/);
    assert.equal((await call('POST', '/api/v1/settings/syslog/test')).statusCode, 400, 'not configured');
    const saved = json(await call('PUT', '/api/v1/settings/syslog', { enabled: true, host: '127.0.0.1', port, format: 'rfc5424', hostname_override: 'fw-test', allowed_addresses: ['127.0.0.1'] }));
    assert.equal(saved.transport, 'udp');
    const sent = json(await call('POST', '/api/v1/settings/syslog/test'));
    assert.equal(sent.ok, true);
    assert.match(await received, /^<134>1 \S+ fw-test bulwark \d+ - - Bulwark syslog test message$/);
    const status = json(await call('GET', '/api/v1/settings/syslog/status'));
    assert.equal(status[0].process, 'bulwark-api');
    assert.equal(status[0].sent, 1);
    assert.equal(status[0].connected, true);
  } finally {
    listener.close();
  }
  // A draft over TCP to a closed port fails with 502 and is counted.
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const closedPort = (closed.address() as { port: number }).port;
  closed.close();
  const failed = await call('POST', '/api/v1/settings/syslog/test', { host: '127.0.0.1', port: closedPort, transport: 'tcp', allowed_addresses: ['127.0.0.1'] });
  assert.equal(failed.statusCode, 502);
  assert.equal(json(await call('GET', '/api/v1/settings/syslog/status'))[0].errors, 1);
});

test('log rotation: policy, managed logs with sizes, forced rotation confined to managed paths, gzip generations', async () => {
  const view = json(await call('GET', '/api/v1/settings/log-rotation'));
  assert.deepEqual(view.config, { max_size_mb: 5, keep: 7, compression: 'gzip' });
  assert.deepEqual(view.limits, { min_size_mb: 1, max_size_mb: 500, max_keep: 50 });
  assert.ok(view.logs.some((l: { service: string }) => l.service === 'unbound'));
  assert.match(json(await call('PUT', '/api/v1/settings/log-rotation', { keep: 51 })).error, /body\.keep/);
  assert.match(json(await call('PUT', '/api/v1/settings/log-rotation', { compression: 'xz' })).error, /body\.compression/);
  const apiLog = join(t.dataDir, 'logs', 'api.log');
  mkdirSync(join(t.dataDir, 'logs'), { recursive: true });
  writeFileSync(apiLog, 'line one\nline two\n');
  const refused = await call('POST', '/api/v1/settings/log-rotation/rotate', { path: '/etc/passwd' });
  assert.equal(refused.statusCode, 400);
  assert.match(json(refused).error, /managed logs/);
  assert.equal((await call('POST', '/api/v1/settings/log-rotation/rotate', { path: `${t.dataDir}/logs/../logs/../../etc/passwd` })).statusCode, 400);
  const rotated = json(await call('POST', '/api/v1/settings/log-rotation/rotate', { path: apiLog }));
  assert.equal(rotated.ok, true);
  assert.equal(statSync(apiLog).size, 0);
  assert.equal(gunzipSync(readFileSync(`${apiLog}.1.gz`)).toString(), 'line one\nline two\n');
  writeFileSync(apiLog, 'second\n');
  await call('POST', '/api/v1/settings/log-rotation/rotate', { path: 'bulwark-api' });
  assert.ok(existsSync(`${apiLog}.2.gz`));
  // A pass rotates only logs above the cap: a 2 MiB log with a 1 MB cap.
  writeFileSync(apiLog, Buffer.alloc(2 * 1024 * 1024, 97));
  const after = json(await call('PUT', '/api/v1/settings/log-rotation', { max_size_mb: 1, keep: 2, compression: 'none' }));
  assert.equal(statSync(apiLog).size, 0);
  assert.ok(existsSync(`${apiLog}.1`));
  assert.equal(after.logs.find((l: { service: string }) => l.service === 'bulwark-api').rotated >= 2, true);
  assert.match(readFileSync(join(t.dataDir, 'logrotate.conf'), 'utf8'), /size 1M\n\s+rotate 2\n\s+nocompress/);
  assert.equal(json(await call('POST', '/api/v1/settings/log-rotation/rotate')).message, 'nothing to rotate');
});

test('generic sections: name validated, values stored as text, api_server trusted proxies validated and read at the next start', async () => {
  assert.deepEqual(json(await call('GET', '/api/v1/settings/metrics')), {});
  const metrics = json(await call('PUT', '/api/v1/settings/metrics', { backend: 'local', collection_interval: 5, persist: true }));
  assert.deepEqual(metrics, { backend: 'local', collection_interval: '5', persist: 'true' });
  assert.deepEqual(json(await call('GET', '/api/v1/settings/metrics')), metrics);
  assert.equal((await call('GET', '/api/v1/settings/Bad_Name')).statusCode, 400);
  assert.match(json(await call('PUT', '/api/v1/settings/metrics', { nested: { a: 1 } })).error, /body\.nested/);
  assert.match(json(await call('PUT', '/api/v1/settings/api_server', { trusted_proxies: '10.0.0.1, not-an-ip' })).error, /body\.trusted_proxies/);
  assert.equal((await call('PUT', '/api/v1/settings/api_server', { trusted_proxies: '10.0.0.1, 192.168.0.0/16', port: 8443 })).statusCode, 200);
  assert.deepEqual(trustedProxiesFromSettings(t.dataDir), ['10.0.0.1', '192.168.0.0/16']);
  // Specific sections keep their own routes.
  assert.equal(json(await call('GET', '/api/v1/settings/tls')).block_expired, true);
});

test('SMTP: password sealed and never returned, validation, test e-mail delivered to a local SMTP listener', async () => {
  const messages: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onAuth(auth, _session, callback) {
      callback(auth.username === 'mailer' && auth.password === 'mail-secret-9' ? null : new Error('bad credentials'), { user: auth.username });
    },
    onData(stream, _session, callback) {
      let data = '';
      stream.on('data', (chunk: Buffer) => (data += chunk.toString()));
      stream.on('end', () => {
        messages.push(data);
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;
  try {
    const defaults = json(await call('GET', '/api/v1/notify/smtp/config'));
    assert.deepEqual([defaults.port, defaults.tls, defaults.from_address, defaults.has_password], [587, 'starttls', 'bulwark@localhost', false]);
    const notConfigured = await call('POST', '/api/v1/notify/smtp/test');
    assert.equal(notConfigured.statusCode, 400);
    assert.match(json(notConfigured).error, /not configured/);
    assert.match(json(await call('PUT', '/api/v1/notify/smtp/config', { enabled: true })).error, /host and body\.recipients are required/);
    const saved = await call('PUT', '/api/v1/notify/smtp/config', {
      enabled: true, host: '127.0.0.1', port, tls: 'none', username: 'mailer', password: 'mail-secret-9', allowed_addresses: ['127.0.0.1'], recipients: 'ops@example.org, noc@example.org', enabled_events: ['backup_saved', 'bogus'],
    });
    assert.equal(saved.statusCode, 200, saved.body);
    assert.equal(json(saved).has_password, true);
    assert.deepEqual(json(saved).enabled_events, ['backup_saved']);
    assert.ok(!saved.body.includes('mail-secret-9'));
    assert.ok(!(await call('GET', '/api/v1/notify/smtp/config')).body.includes('mail-secret-9'));
    const sent = await call('POST', '/api/v1/notify/smtp/test');
    assert.equal(sent.statusCode, 200, sent.body);
    assert.deepEqual(json(sent), { ok: true, message: 'test email sent' });
    assert.equal(messages.length, 1);
    assert.match(messages[0], /Subject: Bulwark test notification/);
    assert.match(messages[0], /To: ops@example.org, noc@example.org/);
    // A draft with a wrong password is refused by the server: 502, nothing stored.
    const refused = await call('POST', '/api/v1/notify/smtp/test', { host: '127.0.0.1', port, tls: 'none', username: 'mailer', password: 'wrong', recipients: 'ops@example.org' });
    assert.equal(refused.statusCode, 502);
    assert.equal(json(await call('PUT', '/api/v1/notify/smtp/config', { password: null })).has_password, true, 'null keeps the password');
    assert.equal(json(await call('PUT', '/api/v1/notify/smtp/config', { password: '' })).has_password, false, '"" clears it');
    assert.equal(json(await call('PUT', '/api/v1/notify/smtp/config', { tls: 'implicittls' })).tls, 'implicit');
  } finally {
    server.close();
  }
});
