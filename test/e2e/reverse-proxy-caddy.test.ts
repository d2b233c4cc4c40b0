/**
 * The reverse proxy proven from a client's side, in three namespaces the test creates: Bulwark
 * (`--platform linux`) runs Caddy as the `caddy` user in a firewall namespace; two back-end HTTP services run in
 * a server namespace; a client namespace reaches them with curl by host name over TLS, trusting only the local
 * CA's root. Proven: routing by host name to two services, certificates of the local CA chosen by SNI, basic
 * auth and header middlewares taking effect, the access log, a reload (new certificate) served by the same
 * Caddy process while a slow request in flight completes, a refused configuration keeping the previous one,
 * Caddy killed with SIGKILL restarted by Bulwark's supervision and serving again within a few seconds, and TCP
 * routers refused with 400 naming the missing feature.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { systemAccount } from '../../src/platform/daemon-runtime.js';
import { systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';
import { NetnsLab } from '../helpers/netns-lab.js';
import { daemonLogWith } from '../helpers/daemon-log-file.js';

const skipReason = () => systemSkip('the reverse-proxy namespace lab', { root: true, programs: ['caddy', 'curl', 'openssl', 'ip', 'setpriv'], users: ['caddy'] });

const FW = '10.216.0.1';
const CLIENT = '10.216.0.2';
const FW_BACK = '10.216.1.1';
const BACKEND = '10.216.1.2';

/** A back end that names itself and echoes the header the proxy adds; /slow answers after two seconds. */
const backend = (name: string, port: number) => `require('http').createServer((q,r)=>{const a=()=>r.end(${JSON.stringify(name)}+' host='+q.headers.host+' from='+(q.headers['x-b16-from']||'-'));if(q.url==='/slow')setTimeout(a,2000);else a();}).listen(${port},'${BACKEND}')`;

/** The PID and user id of the Caddy process in a namespace. */
function caddyProcess(ns: string): { pid: number; uid: number } | null {
  const pids = spawnSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).map(Number);
  for (const pid of pids) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'caddy') continue;
      const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
      return { pid, uid };
    } catch {
      // gone
    }
  }
  return null;
}

test('Caddy under Bulwark, reached from a client namespace: routing by host over TLS from the local CA, middlewares, reload without restart, refusals', { skip: skipReason(), timeout: 300_000 }, async (t) => {
  const lab = new NetnsLab('b16s');
  try {
    const fw = lab.namespace('fw');
    const client = lab.namespace('cl');
    const server = lab.namespace('be');
    lab.link({ ns: fw, name: `b16f${lab.tag}`, address: `${FW}/24` }, { ns: client, name: `b16c${lab.tag}`, address: `${CLIENT}/24` });
    lab.link({ ns: fw, name: `b16g${lab.tag}`, address: `${FW_BACK}/24` }, { ns: server, name: `b16s${lab.tag}`, address: `${BACKEND}/24` });
    lab.spawnIn(server, process.execPath, ['-e', backend('backend one', 8081)]);
    lab.spawnIn(server, process.execPath, ['-e', backend('backend two', 8082)]);
    lab.startBulwark(fw, await freePort());

    // The local CA and one server certificate per host name.
    lab.call('POST', '/api/v1/ca', { common_name: 'b16 Test Root' });
    const caPem = join(lab.dataDir, 'ca.pem');
    writeFileSync(caPem, lab.call('GET', '/api/v1/ca/cert.pem'));
    const one = lab.call('POST', '/api/v1/ca/certs', { cert_type: 'server', common_name: 'one.b16.test', sans: [] });
    const two = lab.call('POST', '/api/v1/ca/certs', { cert_type: 'server', common_name: 'two.b16.test', sans: [] });
    const serialOf = (id: string) => lab.call('GET', `/api/v1/ca/certs/${id}`).serial as string;

    const password = 's3cret-b16';
    const hash = spawnSync('caddy', ['hash-password', '--plaintext', password], { encoding: 'utf8' }).stdout.trim();
    const rp = '/api/v1/reverse-proxy';
    const tlsOne = lab.call('POST', `${rp}/tls/certs`, { name: 'one', source: `ca:${one.id}` });
    lab.call('POST', `${rp}/tls/certs`, { name: 'two', source: `ca:${two.id}` });
    lab.call('POST', `${rp}/entrypoints`, { name: 'websecure', address: `${FW}:443` });
    // The backends sit on a private LAN: an administrator allow-lists it for the proxy (docs/security.md).
    lab.call('PUT', '/api/v1/settings/outbound', { allowed_addresses: ['10.216.1.0/24'] });
    lab.call('POST', `${rp}/http/services`, { name: 'one', service_type: 'loadBalancer', config_json: JSON.stringify({ servers: [{ url: `http://${BACKEND}:8081` }] }) });
    lab.call('POST', `${rp}/http/services`, { name: 'two', service_type: 'loadBalancer', config_json: JSON.stringify({ servers: [{ url: `http://${BACKEND}:8082` }] }) });
    lab.call('POST', `${rp}/http/middlewares`, { name: 'hdr', middleware_type: 'headers', config_json: JSON.stringify({ customRequestHeaders: { 'X-B16-From': 'proxy' }, customResponseHeaders: { 'X-B16-Proxy': 'caddy' } }) });
    lab.call('POST', `${rp}/http/middlewares`, { name: 'auth', middleware_type: 'basicAuth', config_json: JSON.stringify({ users: [`alice:${hash}`] }) });
    lab.call('POST', `${rp}/http/routers`, { name: 'r-one', rule: 'Host(`one.b16.test`)', service: 'one', entry_points: '["websecure"]', middlewares: '["hdr"]', tls_json: '{}' });
    lab.call('POST', `${rp}/http/routers`, { name: 'r-two', rule: 'Host(`two.b16.test`)', service: 'two', entry_points: '["websecure"]', middlewares: '["auth"]', tls_json: '{}' });
    const accessLog = join(lab.dataDir, 'logs', 'reverse-proxy', 'access.log');
    lab.call('PUT', `${rp}/config`, { enabled: true, access_log_enabled: true, access_log_path: accessLog, access_log_format: 'common' });

    assert.deepEqual(lab.call('POST', `${rp}/validate`, undefined, 200), { valid: true, message: 'Configuration valid.' });
    const applied = lab.call('POST', `${rp}/apply`);
    assert.match(applied.message, /Caddy started/);
    assert.equal(lab.call('GET', `${rp}/status`).running, true);

    // Caddy runs as its own user.
    const first = caddyProcess(fw);
    assert.ok(first, 'a caddy process runs in the firewall namespace');
    assert.equal(first.uid, systemAccount('caddy')!.uid, 'Caddy runs as the caddy user');

    const curl = (host: string, path = '/', extra: string[] = []) => {
      const result = spawnSync('ip', ['netns', 'exec', client, 'curl', '-sS', '--max-time', '15', '--cacert', caPem, '--resolve', `${host}:443:${FW}`, '-D', '-', ...extra, `https://${host}${path}`], { encoding: 'utf8', timeout: 30_000 });
      const [head, ...body] = result.stdout.split('\r\n\r\n');
      return { status: Number(/^HTTP\/\S+ (\d+)/.exec(head)?.[1] ?? 0), head, body: body.join('\r\n\r\n'), error: result.stderr };
    };
    const servedSerial = (host: string) => {
      const result = spawnSync('ip', ['netns', 'exec', client, 'sh', '-c', `echo | openssl s_client -connect ${FW}:443 -servername ${host} 2>/dev/null | openssl x509 -noout -serial`], { encoding: 'utf8', timeout: 30_000 });
      return /serial=([0-9A-F]+)/i.exec(result.stdout)?.[1]?.toUpperCase().replace(/^0+/, '') ?? `none (${result.stdout.trim()})`;
    };
    const strip = (serial: string) => serial.toUpperCase().replace(/^0+/, '');

    // Routing by host name, over TLS with the local CA's certificates (chosen by SNI).
    const answerOne = curl('one.b16.test');
    assert.equal(answerOne.status, 200, `${answerOne.error}\n${lab.log}`);
    assert.equal(answerOne.body, 'backend one host=one.b16.test from=proxy', 'the headers middleware added the request header');
    assert.match(answerOne.head, /^x-b16-proxy: caddy$/im, 'the headers middleware added the response header');
    assert.equal(servedSerial('one.b16.test'), strip(serialOf(one.id)));
    assert.equal(servedSerial('two.b16.test'), strip(serialOf(two.id)));

    // Basic auth on the second host only.
    assert.equal(curl('two.b16.test').status, 401);
    assert.equal(curl('two.b16.test', '/', ['-u', 'alice:wrong']).status, 401);
    const authed = curl('two.b16.test', '/', ['-u', `alice:${password}`]);
    assert.equal(authed.status, 200);
    assert.equal(authed.body, 'backend two host=two.b16.test from=-', 'the second router has no headers middleware');

    // The access log: Bulwark writes Caddy's entries in common log format, and serves them newest first.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const logged = lab.call('GET', `${rp}/logs?log_type=access&search=two.b16`);
    assert.ok(Array.isArray(logged));
    const lines = lab.call('GET', `${rp}/logs?log_type=access&lines=50`) as string[];
    assert.ok(lines.some((line) => /^10\.216\.0\.2 - alice \[.+\] "GET \/ HTTP\/[12](\.[01])?" 200 /.test(line)), lines.join('\n'));
    assert.ok(lines.some((line) => / 401 /.test(line)));
    assert.ok(existsSync(accessLog) && readFileSync(accessLog, 'utf8').includes('"GET / HTTP/'), 'the access log file is written');
    // Caddy's own log (standard error, JSON) is in the local log; the access log stays apart.
    const caddyLog = await daemonLogWith(lab.dataDir, 'caddy', /"msg":"serving initial configuration"/);
    assert.ok(!caddyLog.includes('"GET / HTTP/'), 'the access log is not mixed into caddy.log');

    // A reload: a new certificate for one.b16.test, applied while a slow request is in flight.
    const renewed = lab.call('POST', '/api/v1/ca/certs', { cert_type: 'server', common_name: 'one.b16.test', sans: [] });
    const slow = spawn('ip', ['netns', 'exec', client, 'curl', '-sS', '--max-time', '20', '--cacert', caPem, '--resolve', `one.b16.test:443:${FW}`, 'https://one.b16.test/slow'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let slowBody = '';
    slow.stdout.on('data', (chunk: Buffer) => (slowBody += chunk.toString()));
    const slowDone = new Promise<number>((resolve) => slow.on('exit', (code) => resolve(code ?? -1)));
    await new Promise((resolve) => setTimeout(resolve, 500));
    lab.call('PUT', `${rp}/tls/certs/${tlsOne.id}`, { source: `ca:${renewed.id}` });
    const reloaded = lab.call('POST', `${rp}/apply`);
    assert.match(reloaded.message, /reloaded without a restart/);
    assert.equal(await slowDone, 0, 'the request in flight during the reload completed');
    assert.equal(slowBody, 'backend one host=one.b16.test from=proxy');
    assert.equal(servedSerial('one.b16.test'), strip(serialOf(renewed.id)), 'the new certificate is served');
    assert.equal(caddyProcess(fw)?.pid, first.pid, 'by the same Caddy process');

    // Supervision: a Caddy killed outright is restarted with the applied configuration (the renewed certificate),
    // and a client gets through again (polled for up to 10 s; the delay is reported); the status reports the restart.
    const supervised = lab.call('GET', `${rp}/status`);
    assert.equal(supervised.pid, first.pid);
    assert.equal(supervised.restarts, 0);
    process.kill(first.pid, 'SIGKILL');
    const killedAt = Date.now();
    let back = curl('one.b16.test', '/', ['--max-time', '2']);
    while (back.status !== 200 && Date.now() - killedAt < 10_000) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      back = curl('one.b16.test', '/', ['--max-time', '2']);
    }
    const recovery = Date.now() - killedAt;
    assert.equal(back.status, 200, `no answer through the proxy ${recovery} ms after Caddy was killed\n${lab.log}`);
    assert.equal(back.body, 'backend one host=one.b16.test from=proxy');
    t.diagnostic(`Caddy SIGKILLed: served again through the proxy after ${recovery} ms`);
    const restarted = caddyProcess(fw);
    assert.ok(restarted && restarted.pid !== first.pid, 'a new Caddy process');
    assert.equal(restarted.uid, systemAccount('caddy')!.uid, 'still as the caddy user');
    const afterKill = lab.call('GET', `${rp}/status`);
    assert.deepEqual([afterKill.running, afterKill.restarts, afterKill.pid], [true, 1, restarted.pid]);
    assert.equal(servedSerial('one.b16.test'), strip(serialOf(renewed.id)), 'the restarted Caddy serves the applied configuration');

    // A configuration Caddy refuses (two services on one port, one plain and one TLS) changes nothing.
    lab.call('POST', `${rp}/http/routers`, { name: 'r-plain', rule: 'Host(`plain.b16.test`)', service: 'one', entry_points: '["websecure"]' });
    const [refused] = lab.api(['POST', `${rp}/apply`]);
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.match(refused.body.error, /entrypoint websecure serves TLS .* and plain HTTP for HTTP router r-plain/);
    assert.equal(curl('one.b16.test').status, 200, 'the previous configuration still serves');
    const routers = lab.call('GET', `${rp}/http/routers`) as { id: string; name: string }[];
    lab.call('DELETE', `${rp}/http/routers/${routers.find((r) => r.name === 'r-plain')!.id}`, undefined, 204);

    // What Caddy cannot express is refused when written, naming it.
    lab.call('POST', `${rp}/tcp/services`, { name: 'pg', config_json: '{"servers":[{"address":"10.216.1.2:5432"}]}', enabled: false });
    const [tcp] = lab.api(['POST', `${rp}/tcp/routers`, { name: 'db', rule: 'HostSNI(`*`)', service: 'pg', entry_points: 'websecure' }]);
    assert.equal(tcp.status, 400);
    assert.match(tcp.body.error, /TCP router db: Caddy .*no layer4 module/);
    const [rate] = lab.api(['POST', `${rp}/http/middlewares`, { name: 'rl', middleware_type: 'rateLimit', config_json: '{"average":10}' }]);
    assert.equal(rate.status, 400);
    assert.match(rate.body.error, /middleware type rateLimit is not supported by Caddy/);

    // Stop and start through the API.
    assert.match(lab.call('POST', `${rp}/stop`).message, /stopped/);
    assert.equal(caddyProcess(fw), null);
    assert.notEqual(curl('one.b16.test').status, 200);
    assert.match(lab.call('POST', `${rp}/start`).message, /started/);
    assert.equal(curl('one.b16.test').status, 200);
    assert.ok((lab.call('GET', `${rp}/logs?log_type=server&lines=500`) as string[]).length > 0, 'Caddy\'s server log is read');
  } finally {
    await lab.cleanup();
  }
});
