/**
 * HTTPS for the API, the console and both streams (issue 37 item 1), on loopback through real sockets: the
 * certificate the local CA issues at first start, trusted by a client that trusts GET /ca/cert.pem only (curl
 * --cacert, Node's TLS client, a WebSocket client); the minimum version; a certificate swap through
 * /settings/tls served to new connections with no restart and no failed request; refusals (key mismatch,
 * expired, weak) that change nothing; the plain listener's redirect and HSTS; an ACME certificate published to
 * the local TLS store and its renewal served at once.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { connect, type PeerCertificate } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';
import { adminHeaders, type Headers } from './helpers/auth.js';
import { systemSkip } from './helpers/system-skip.js';
import { freePort } from './helpers/free-port.js';

const skip = systemSkip('the HTTPS client checks', { programs: ['curl', 'openssl'] });

let t: AreaApp;
let admin: Headers;
let caPem = '';
let caFile = '';
let httpsPort = 0;
let httpPort = 0;
const consoleDir = mkdtempSync(join(tmpdir(), 'bulwark-https-console-'));
writeFileSync(join(consoleDir, 'index.html'), '<!doctype html><title>Bulwark console</title>');

before(async () => {
  t = await startAreaApp({ config: { tlsListen: { host: '127.0.0.1', port: await freePort() } }, consoleDir });
  admin = t.headers;
  httpsPort = (t.app.secureServer!.address() as { port: number }).port;
  httpPort = Number(new URL(await t.app.listen({ host: '127.0.0.1', port: 0 })).port);
  const ca = await t.app.inject({ url: '/api/v1/ca/cert.pem', headers: admin });
  assert.equal(ca.statusCode, 200, 'the local CA was created at first start');
  caPem = ca.body;
  caFile = join(t.dataDir, 'client-ca.pem');
  writeFileSync(caFile, caPem);
});
after(async () => {
  await t?.close();
  rmSync(consoleDir, { recursive: true, force: true });
});

/**
 * A program run without blocking the event loop: the server answering it runs in this process. Resolves with
 * its exit status and output (a non-zero status is a result here, not an error).
 */
function run(file: string, args: string[], input = ''): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(file, args, { encoding: 'utf8', timeout: 20_000 }, (error, stdout, stderr) => {
      resolve({ status: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
    child.stdin!.end(input);
  });
}

const curl = (...args: string[]) => run('curl', ['-sS', '--noproxy', '*', '--max-time', '10', '--cacert', caFile, ...args]);

/** The certificate a new TLS connection gets, verified against the local CA (`ca` overrides what is trusted). */
function peer(options: { servername?: string; ca?: string; minVersion?: 'TLSv1.2' | 'TLSv1.3'; maxVersion?: 'TLSv1.2' | 'TLSv1.3' } = {}): Promise<{ cert: PeerCertificate; protocol: string | null }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: httpsPort, ca: options.ca ?? caPem, servername: options.servername, minVersion: options.minVersion, maxVersion: options.maxVersion }, () => {
      const result = { cert: socket.getPeerCertificate(), protocol: socket.getProtocol() };
      socket.end();
      resolve(result);
    });
    socket.once('error', reject);
  });
}

/** One request over a new HTTPS connection: status, body and the serial of the certificate it was served with. */
function get(path: string, headers: Record<string, string> = {}, ca = caPem): Promise<{ status: number; body: string; serial: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port: httpsPort, path, headers, ca, agent: false }, (res) => {
      const serial = (res.socket as import('node:tls').TLSSocket).getPeerCertificate().serialNumber;
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body, serial, headers: res.headers }));
    });
    req.once('error', reject);
    req.end();
  });
}

async function put(body: Record<string, unknown>, headers = admin) {
  const response = await t.app.inject({ method: 'PUT', url: '/api/v1/settings/tls', headers, payload: body });
  return { status: response.statusCode, body: response.body ? response.json() : undefined };
}

async function putOk(body: Record<string, unknown>): Promise<void> {
  const answer = await put(body);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
}

/** PUT /settings/tls over HTTPS (with the redirect on, the plain listener — and inject — answer 301). */
function putOverHttps(body: Record<string, unknown>): Promise<number> {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = httpsRequest({ host: '127.0.0.1', port: httpsPort, path: '/api/v1/settings/tls', method: 'PUT', ca: caPem, agent: false, headers: { ...admin, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.once('error', reject);
    req.end(text);
  });
}

async function status() {
  return (await t.app.inject({ url: '/api/v1/settings/tls/status', headers: admin })).json();
}

/** A server certificate of the local CA, written into the data directory; its paths relative to it. */
async function caCertificateFiles(name: string, validityDays = 30): Promise<{ cert_path: string; key_path: string; serial: string }> {
  const issued = await t.app.inject({ method: 'POST', url: '/api/v1/ca/certs', headers: admin, payload: { cert_type: 'server', common_name: 'localhost', sans: ['127.0.0.1'], validity_days: validityDays } });
  assert.equal(issued.statusCode, 201, issued.body);
  const { certificate_pem: cert, private_key_pem: key, id } = issued.json();
  mkdirSync(join(t.dataDir, 'api-certs'), { recursive: true });
  writeFileSync(join(t.dataDir, 'api-certs', `${name}.crt`), cert);
  writeFileSync(join(t.dataDir, 'api-certs', `${name}.key`), key);
  const serial = (await t.app.inject({ url: `/api/v1/ca/certs/${id}`, headers: admin })).json().serial as string;
  return { cert_path: `api-certs/${name}.crt`, key_path: `api-certs/${name}.key`, serial };
}

test('at first start the local CA issues the API a certificate for the host\'s names and addresses; a client trusting /ca/cert.pem connects without warnings', { skip }, async () => {
  const served = await status();
  assert.equal(served.serving.source, 'local-ca');
  assert.ok(served.serving.names.includes('127.0.0.1') && served.serving.names.includes('localhost'), JSON.stringify(served.serving.names));
  assert.equal(served.listening, `127.0.0.1:${httpsPort}`);
  // curl verifies the chain and the name against the CA file only (no -k).
  for (const url of [`https://127.0.0.1:${httpsPort}/api/v1/auth/register`, `https://localhost:${httpsPort}/api/v1/auth/register`]) {
    const answer = await curl('-o', '/dev/null', '-w', '%{http_code} %{ssl_verify_result}', url);
    assert.equal(answer.stdout, '200 0', `${url}: ${answer.stderr}`);
  }
  // Without the CA the same client refuses: the trust comes from it.
  const untrusted = await run('curl', ['-sS', '--noproxy', '*', '--max-time', '10', `https://127.0.0.1:${httpsPort}/`]);
  assert.notEqual(untrusted.status, 0);
  assert.match(untrusted.stderr, /certificate/i);
  // The API with a credential, and the console, over HTTPS.
  const me = await curl('-H', `authorization: ${admin.authorization}`, `https://127.0.0.1:${httpsPort}/api/v1/auth/me`);
  assert.equal(JSON.parse(me.stdout).username, 'admin');
  const console = await curl(`https://127.0.0.1:${httpsPort}/`);
  assert.match(console.stdout, /Bulwark console/);
});

test('TLS 1.2 and 1.3 are accepted, 1.0 and 1.1 refused; min_version tls13 refuses 1.2 on the next connection, without a restart', { skip }, async () => {
  assert.equal((await peer({ maxVersion: 'TLSv1.2' })).protocol, 'TLSv1.2');
  assert.equal((await peer({ minVersion: 'TLSv1.3' })).protocol, 'TLSv1.3');
  for (const [flag, version] of [['-tls1', 'TLSv1'], ['-tls1_1', 'TLSv1.1']]) {
    // The client is allowed the old version (SECLEVEL 0): the refusal is the server's.
    const old = await run('openssl', ['s_client', '-connect', `127.0.0.1:${httpsPort}`, flag, '-cipher', 'DEFAULT:@SECLEVEL=0', '-CAfile', caFile]);
    assert.notEqual(old.status, 0, `${version} was accepted:\n${old.stdout}`);
    assert.match(old.stdout + old.stderr, /alert protocol version|unsupported protocol|no protocols available|wrong version number/i, `${version}: ${old.stderr}`);
  }
  const curl11 = await curl('--tlsv1.1', '--tls-max', '1.1', '--ciphers', 'DEFAULT:@SECLEVEL=0', `https://127.0.0.1:${httpsPort}/`);
  assert.notEqual(curl11.status, 0, 'curl with TLS 1.1 at most is refused');
  assert.equal((await curl('-o', '/dev/null', '-w', '%{http_code}', '--tlsv1.2', '--tls-max', '1.2', `https://127.0.0.1:${httpsPort}/api/v1/auth/register`)).stdout, '200');

  await putOk({ min_version: 'tls13' });
  await assert.rejects(peer({ maxVersion: 'TLSv1.2' }), /protocol version|alert/i, 'TLS 1.2 refused under tls13');
  assert.equal((await peer()).protocol, 'TLSv1.3');
  await putOk({ min_version: 'tls12' });
  assert.equal((await peer({ maxVersion: 'TLSv1.2' })).protocol, 'TLSv1.2');
});

test('the dashboard WebSocket and a Server-Sent Events stream work over HTTPS', { skip }, async () => {
  const ticket = (await t.app.inject({ method: 'POST', url: '/api/v1/auth/ws-ticket', headers: admin })).json().ticket as string;
  const ws = new WebSocket(`wss://127.0.0.1:${httpsPort}/api/v1/ws?ticket=${ticket}`, { ca: caPem });
  const first = await new Promise<string>((resolve, reject) => {
    ws.once('message', (data) => resolve(data.toString()));
    ws.once('unexpected-response', (_request, response) => reject(new Error(`refused ${response.statusCode}`)));
    ws.once('error', reject);
  });
  assert.equal(typeof JSON.parse(first), 'object', 'a dashboard frame');
  ws.close();

  const events = await new Promise<string>((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port: httpsPort, path: '/api/v1/pending/stream', ca: caPem, agent: false, headers: { ...admin, accept: 'text/event-stream' } }, (res) => {
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /text\/event-stream/);
      let text = '';
      res.on('data', (chunk: Buffer) => {
        text += chunk;
        if (/^data: /m.test(text)) {
          req.destroy();
          resolve(text);
        }
      });
    });
    req.once('error', reject);
    req.end();
  });
  assert.match(events, /^retry: 5000/m);
  assert.match(events, /^id: 1$/m);
});

test('a certificate swap through /settings/tls changes the served serial for new connections with no restart and no failed request', { skip }, async () => {
  const before = (await peer()).cert.serialNumber;
  const files = await caCertificateFiles('swap');
  const seen: string[] = [];
  const failures: string[] = [];
  let stop = false;
  const loop = (async () => {
    while (!stop) {
      try {
        const answer = await get('/api/v1/auth/register');
        if (answer.status !== 200) failures.push(`status ${answer.status}`);
        seen.push(answer.serial);
      } catch (error) {
        failures.push((error as Error).message);
      }
    }
  })();
  // A connection opened before the swap and kept alive finishes on the old certificate.
  const kept = await new Promise<import('node:tls').TLSSocket>((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: httpsPort, ca: caPem }, () => resolve(socket));
    socket.once('error', reject);
  });
  for (let waited = 0; seen.length < 5 && waited < 15_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
  const pid = process.pid;
  await putOk({ cert_path: files.cert_path, key_path: files.key_path });
  const swappedAt = seen.length;
  for (let waited = 0; seen.length < swappedAt + 5 && waited < 15_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
  stop = true;
  await loop;
  assert.deepEqual(failures, [], 'no request failed across the swap');
  assert.equal(seen[0], before);
  assert.equal(seen.at(-1), files.serial, 'new connections get the new certificate');
  const firstNew = seen.indexOf(files.serial);
  assert.ok(firstNew > 0 && seen.slice(firstNew).every((serial) => serial === files.serial), `old, then only new: ${seen.join(' ')}`);
  assert.equal(process.pid, pid);
  kept.write(`GET /api/v1/auth/register HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
  const keptAnswer = await new Promise<string>((resolve) => {
    let text = '';
    kept.on('data', (chunk: Buffer) => (text += chunk));
    kept.on('end', () => resolve(text));
  });
  assert.match(keptAnswer, /^HTTP\/1\.1 200/, 'the connection opened before the swap is still served');
  assert.equal(kept.getPeerCertificate().serialNumber, before, 'on the certificate it started with');
  assert.equal((await status()).serving.source, 'files');
  assert.equal((await status()).serving.serial, files.serial);

  // The served file certificate (30 days) is among the certificates the expiry check looks at: announced with a
  // 31-day window, not with the default 14 (the clock stays: moving it would let the API's own certificate renew).
  const expiring: { certificate_id: string; source: string; days_left: number }[] = [];
  const stopListening = t.app.context.events.on('certificate.expiring', (event) => expiring.push(event.payload as never));
  const announce = (days: number) => (t.app.areas.find((area) => area.name === 'acme') as unknown as { announceExpiring(days: number): number }).announceExpiring(days);
  try {
    announce(14);
    assert.ok(!expiring.some((e) => e.certificate_id === 'api-tls'), 'not with 30 days left');
    announce(31);
    const announced = expiring.find((e) => e.certificate_id === 'api-tls');
    assert.equal(announced?.source, 'file', JSON.stringify(expiring));
    assert.ok(announced.days_left >= 28 && announced.days_left <= 30, JSON.stringify(announced));
  } finally {
    stopListening();
  }
});

test('a certificate that does not match its key, is expired or is weaker than the policy is refused with 400 and nothing changes', { skip }, async () => {
  const served = (await status()).serving.serial;
  const settingsBefore = (await t.app.inject({ url: '/api/v1/settings/tls', headers: admin })).body;
  const a = await caCertificateFiles('a');
  const b = await caCertificateFiles('b');
  const mismatch = await put({ cert_path: a.cert_path, key_path: b.key_path });
  assert.equal(mismatch.status, 400);
  assert.match(mismatch.body.error, /^body\.cert_path: the certificate does not match the key/);

  const short = await caCertificateFiles('short', 1);
  t.clock.advance(2 * 86_400_000);
  try {
    // Signed in again: the access token expired with the two days too.
    const expired = await put({ cert_path: short.cert_path, key_path: short.key_path }, await adminHeaders(t.app));
    assert.equal(expired.status, 400);
    assert.match(expired.body.error, /body\.cert_path: the certificate expired on/);
  } finally {
    t.clock.advance(-2 * 86_400_000);
  }

  const weakKey = join(t.dataDir, 'api-certs', 'weak.key');
  const weakCert = join(t.dataDir, 'api-certs', 'weak.crt');
  const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:1024', '-nodes', '-keyout', weakKey, '-out', weakCert, '-days', '5', '-subj', '/CN=localhost'], { encoding: 'utf8' });
  assert.equal(made.status, 0, made.stderr);
  // openssl dates the certificate by the real clock; set once it exists (set before, it could read a second earlier
  // than the notBefore and the refusal named the date, not the key: seen under load, as in the ACME test below).
  t.clock.set(Date.now());
  const weak = await put({ cert_path: 'api-certs/weak.crt', key_path: 'api-certs/weak.key' });
  assert.equal(weak.status, 400);
  assert.match(weak.body.error, /weaker than the policy \(block_weak_keys\): RSA key of 1024 bits/);

  // A link inside the data directory to a file outside it is refused before the file is read.
  const outside = mkdtempSync(join(tmpdir(), 'bulwark-https-outside-'));
  try {
    writeFileSync(join(outside, 'out.crt'), readFileSync(join(t.dataDir, a.cert_path)));
    writeFileSync(join(outside, 'out.key'), readFileSync(join(t.dataDir, a.key_path)));
    symlinkSync(join(outside, 'out.crt'), join(t.dataDir, 'api-certs', 'link.crt'));
    symlinkSync(join(outside, 'out.key'), join(t.dataDir, 'api-certs', 'link.key'));
    const linked = await put({ cert_path: 'api-certs/link.crt', key_path: 'api-certs/link.key' });
    assert.equal(linked.status, 400);
    assert.match(linked.body.error, /^body\.cert_path must be a path inside the data directory .*symbolic links out of it are not followed/);
  } finally {
    rmSync(outside, { recursive: true, force: true });
  }

  const missing = await put({ cert_path: '', key_path: '', acme_cert_id: 'no-such-certificate' });
  assert.equal(missing.status, 400);
  assert.match(missing.body.error, /^body\.acme_cert_id: .*local-tls-store/);

  assert.equal((await status()).serving.serial, served, 'still served');
  assert.equal((await peer()).cert.serialNumber, served);
  assert.equal((await t.app.inject({ url: '/api/v1/settings/tls', headers: admin })).body, settingsBefore, 'the settings are unchanged');
});

test('with http_redirect the plain listener answers 301 to the same path over HTTPS; HTTPS answers carry HSTS', { skip }, async () => {
  const plainBefore = await fetch(`http://127.0.0.1:${httpPort}/api/v1/auth/register`, { redirect: 'manual' });
  assert.equal(plainBefore.status, 200);
  assert.equal(plainBefore.headers.get('strict-transport-security'), null, 'no HSTS over plain HTTP');
  await putOk({ http_redirect: true });
  try {
    for (const path of ['/api/v1/status?x=1', '/rules']) {
      const answer = await fetch(`http://127.0.0.1:${httpPort}${path}`, { redirect: 'manual' });
      assert.equal(answer.status, 301, path);
      assert.equal(answer.headers.get('location'), `https://127.0.0.1:${httpsPort}${path}`);
    }
    // Following it, curl ends on HTTPS with the local CA.
    const followed = await curl('-L', '-o', '/dev/null', '-w', '%{url_effective} %{http_code}', `http://127.0.0.1:${httpPort}/api/v1/auth/register`);
    assert.equal(followed.stdout, `https://127.0.0.1:${httpsPort}/api/v1/auth/register 200`);
    const secure = await get('/api/v1/auth/register');
    assert.equal(secure.headers['strict-transport-security'], 'max-age=31536000');
    assert.equal(await putOverHttps({ hsts_max_age: 600 }), 200);
    assert.equal((await get('/api/v1/auth/register')).headers['strict-transport-security'], 'max-age=600');
    const plainPut = await put({ hsts_max_age: 60 });
    assert.equal(plainPut.status, 301, 'a write over plain HTTP is redirected too, not applied');
  } finally {
    assert.equal(await putOverHttps({ http_redirect: false, hsts_max_age: 31_536_000 }), 200);
  }
  assert.equal((await fetch(`http://127.0.0.1:${httpPort}/api/v1/auth/register`, { redirect: 'manual' })).status, 200);
});

test('an ACME certificate published through a local-tls-store target is served when selected, and its renewal at once', { skip }, async () => {
  const acme = t.app.areas.find((area) => area.name === 'acme') as unknown as { service: { storeIssued(id: string, material: object): unknown } };
  const created = await t.app.inject({ method: 'POST', url: '/api/v1/acme/certs', headers: admin, payload: { common_name: 'localhost', challenge_type: 'http-01' } });
  assert.equal(created.statusCode, 201, created.body);
  const certId = created.json().id as string;
  const refused = await t.app.inject({ method: 'POST', url: `/api/v1/acme/certs/${certId}/targets`, headers: admin, payload: { kind: 'local-tls-store', config: { reload_service: 'aifw_api' } } });
  assert.equal(refused.statusCode, 400);
  const target = await t.app.inject({ method: 'POST', url: `/api/v1/acme/certs/${certId}/targets`, headers: admin, payload: { kind: 'local-tls-store' } });
  assert.ok(target.statusCode === 200 || target.statusCode === 201, target.body);
  // The material an order would store (an ACME CA is proven in test/e2e/https-acme-pebble.test.ts).
  const issue = async () => {
    const files = await caCertificateFiles(`acme-${Math.random().toString(36).slice(2)}`);
    acme.service.storeIssued(certId, { cert_pem: readFileSync(join(t.dataDir, files.cert_path), 'utf8'), chain_pem: '', key_pem: readFileSync(join(t.dataDir, files.key_path), 'utf8') });
    const published = await t.app.inject({ method: 'POST', url: `/api/v1/acme/certs/${certId}/publish`, headers: admin });
    assert.equal(published.json().ok, true, published.body);
    return files.serial;
  };
  const first = await issue();
  await putOk({ cert_path: '', key_path: '', acme_cert_id: certId });
  assert.equal((await peer()).cert.serialNumber, first);
  assert.equal((await status()).serving.source, 'acme');
  const second = await issue();
  assert.notEqual(second, first);
  assert.equal((await peer()).cert.serialNumber, second, 'the renewal is served at once');
  const targets = (await t.app.inject({ url: `/api/v1/acme/certs/${certId}/targets`, headers: admin })).json();
  assert.equal(targets[0].last_run_ok, true);
  // A renewal the policy refuses (an RSA 1024 key) is not served: the target says why, and so does the status.
  const weakKey = join(t.dataDir, 'acme-weak.key');
  const weakCert = join(t.dataDir, 'acme-weak.crt');
  assert.equal(spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:1024', '-nodes', '-keyout', weakKey, '-out', weakCert, '-days', '5', '-subj', '/CN=localhost'], { encoding: 'utf8' }).status, 0);
  // The clock is set once the certificate exists: set before, it could read a second earlier than the certificate's
  // notBefore (openssl ran across a second boundary) and the refusal would name the date, not the key (CI saw it).
  t.clock.set(Date.now());
  acme.service.storeIssued(certId, { cert_pem: readFileSync(weakCert, 'utf8'), chain_pem: '', key_pem: readFileSync(weakKey, 'utf8') });
  const refusedPublish = (await t.app.inject({ method: 'POST', url: `/api/v1/acme/certs/${certId}/publish`, headers: admin })).json();
  assert.equal(refusedPublish.ok, false);
  const [weakTarget] = (await t.app.inject({ url: `/api/v1/acme/certs/${certId}/targets`, headers: admin })).json();
  assert.equal(weakTarget.last_run_ok, false);
  assert.match(weakTarget.last_run_error, /refused for the API's HTTPS: .*RSA key of 1024 bits/);
  assert.equal((await peer()).cert.serialNumber, second, 'the previous certificate is still served');
  assert.match((await status()).last_error, /is not served: .*RSA key of 1024 bits/);
  // Back to the local CA's own certificate.
  await putOk({ acme_cert_id: '' });
  assert.equal((await status()).serving.source, 'local-ca');
});

test('the packet filter\'s anti-lockout keeps the HTTPS port reachable too (nftables and pf)', async () => {
  const lines = (await t.app.inject({ url: '/api/v1/rules/system', headers: admin })).json() as string[];
  assert.ok(lines.includes(`ip daddr 127.0.0.1 tcp dport ${httpsPort} accept comment "system: anti-lockout (HTTPS)"`), lines.join('\n'));
  assert.ok(lines.some((line) => line.endsWith(`tcp dport ${t.app.context.config.port} accept comment "system: anti-lockout"`)), 'and the plain port');
  const service = (t.app.areas.find((area) => area.name === 'packet-filter') as unknown as { service: { compile(snapshot: unknown, dialect: 'pf'): { text: string }; storedSnapshot(): unknown } }).service;
  assert.match(service.compile(service.storedSnapshot(), 'pf').text, new RegExp(`pass in quick proto tcp from any to 127\\.0\\.0\\.1 port ${httpsPort} keep state label "bulwark:anti-lockout"`));
});

test('at start a selected certificate that no longer holds leaves HTTPS on the local CA\'s, and the status says why', { skip }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bulwark-https-restart-'));
  const start = () => startAreaApp({ dataDir, config: { tlsListen: { host: '127.0.0.1', port: 0 } } });
  let app = await start();
  try {
    const { headers } = app;
    const issued = (await app.app.inject({ method: 'POST', url: '/api/v1/ca/certs', headers, payload: { cert_type: 'server', common_name: 'localhost', sans: ['127.0.0.1'] } })).json();
    writeFileSync(join(dataDir, 'api.crt'), issued.certificate_pem);
    writeFileSync(join(dataDir, 'api.key'), issued.private_key_pem);
    const selected = await app.app.inject({ method: 'PUT', url: '/api/v1/settings/tls', headers, payload: { cert_path: 'api.crt', key_path: 'api.key' } });
    assert.equal(selected.statusCode, 200, selected.body);
    await app.close();
    rmSync(join(dataDir, 'api.key'));
    app = await start();
    const status = (await app.app.inject({ url: '/api/v1/settings/tls/status', headers: app.headers })).json();
    assert.equal(status.serving.source, 'local-ca');
    assert.match(status.last_error, /^the files certificate is not served: .*api\.key does not exist; serving the local CA's$/);
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a new local CA root (POST /ca) has the API\'s certificate issued again from it at once', { skip }, async () => {
  assert.equal((await status()).serving.source, 'local-ca');
  const before = (await peer()).cert.serialNumber;
  const created = await t.app.inject({ method: 'POST', url: '/api/v1/ca', headers: admin, payload: { common_name: 'Second root' } });
  assert.equal(created.statusCode, 201, created.body);
  const newCa = (await t.app.inject({ url: '/api/v1/ca/cert.pem', headers: admin })).body;
  assert.notEqual(newCa, caPem);
  const after = await peer({ ca: newCa });
  assert.notEqual(after.cert.serialNumber, before);
  await assert.rejects(peer({ ca: caPem }), /certificate/i, 'a client of the old root no longer trusts it');
});
