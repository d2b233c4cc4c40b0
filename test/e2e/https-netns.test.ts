/**
 * HTTPS proven from a client namespace (issue 37 item 1): Bulwark (`--platform linux --tls-listen`) in a firewall
 * namespace, a client in another, pebble (Debian's ACME test CA) in a third. The client trusts the local CA's
 * certificate only (GET /api/v1/ca/cert.pem): curl connects without -k, TLS 1.2 and 1.3 are accepted and 1.0/1.1
 * refused, the dashboard WebSocket opens over wss. Then an ACME certificate from pebble, published through a
 * local-tls-store export target and selected in /settings/tls, is what the client gets (trusting pebble's root),
 * and a renewal is served at once by the same process.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';
import { NetnsLab, ROOT } from '../helpers/netns-lab.js';

const skip = systemSkip('the HTTPS namespace lab', { root: true, programs: ['pebble', 'curl', 'openssl', 'ip'] });

const FW = '10.216.30.1';
const CLIENT = '10.216.30.2';
const FW_CA = '10.216.31.1';
const CA = '10.216.31.2';
const NAME = 'console.b37.test';

test('from a client namespace: HTTPS with the local CA (TLS 1.2/1.3 only), wss, and a pebble certificate through local-tls-store renewed without a restart', { skip, timeout: 300_000 }, async () => {
  const lab = new NetnsLab('b37h');
  const extraCa = process.env.NODE_EXTRA_CA_CERTS;
  try {
    const fw = lab.namespace('fw');
    const client = lab.namespace('cl');
    const ca = lab.namespace('ca');
    lab.link({ ns: fw, name: `b37f${lab.tag}`, address: `${FW}/24` }, { ns: client, name: `b37c${lab.tag}`, address: `${CLIENT}/24` });
    lab.link({ ns: fw, name: `b37g${lab.tag}`, address: `${FW_CA}/24` }, { ns: ca, name: `b37a${lab.tag}`, address: `${CA}/24` });

    // pebble with its own TLS certificate (trusted by Bulwark through NODE_EXTRA_CA_CERTS); every challenge is
    // taken as valid (PEBBLE_VA_ALWAYS_VALID): HTTP-01 itself is proven by test/e2e/acme-pebble.test.ts.
    const pebbleCert = join(lab.dataDir, 'pebble-cert.pem');
    const pebbleKey = join(lab.dataDir, 'pebble-key.pem');
    spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', pebbleKey, '-out', pebbleCert, '-days', '2', '-subj', '/CN=pebble', '-addext', `subjectAltName=IP:${CA}`], { encoding: 'utf8' });
    const config = join(lab.dataDir, 'pebble.json');
    writeFileSync(config, JSON.stringify({ pebble: { listenAddress: `${CA}:14000`, managementListenAddress: `${CA}:15000`, certificate: pebbleCert, privateKey: pebbleKey, httpPort: 80, tlsPort: 443, ocspResponderURL: '', externalAccountBindingRequired: false } }));
    const pebble = lab.spawnIn(ca, 'env', ['PEBBLE_VA_ALWAYS_VALID=1', 'PEBBLE_VA_NOSLEEP=1', 'PEBBLE_WFE_NONCEREJECT=0', 'pebble', '-config', config]);
    let pebbleLog = '';
    pebble.stdout!.on('data', (chunk: Buffer) => (pebbleLog += chunk.toString()));
    pebble.stderr!.on('data', (chunk: Buffer) => (pebbleLog += chunk.toString()));

    process.env.NODE_EXTRA_CA_CERTS = pebbleCert;
    lab.startBulwark(fw, await freePort(), ['--tls-listen', `${FW}:8443`]);
    const caPem = lab.call('GET', '/api/v1/ca/cert.pem') as string;
    assert.match(caPem, /BEGIN CERTIFICATE/);
    const caFile = join(lab.dataDir, 'local-ca.pem');
    writeFileSync(caFile, caPem);
    const inClient = (file: string, args: string[], input = '') => spawnSync('ip', ['netns', 'exec', client, file, ...args], { encoding: 'utf8', input, timeout: 30_000 });
    const curl = (args: string[]) => inClient('curl', ['-sS', '--noproxy', '*', '--max-time', '10', ...args]);
    const served = (servername?: string) => {
      const hello = inClient('openssl', ['s_client', '-connect', `${FW}:8443`, ...(servername ? ['-servername', servername] : [])]);
      return spawnSync('openssl', ['x509', '-noout', '-serial'], { input: hello.stdout, encoding: 'utf8' }).stdout.trim().replace('serial=', '');
    };

    // The client trusts the local CA only: no warning, the name is the firewall's address.
    const first = curl(['--cacert', caFile, '-o', '/dev/null', '-w', '%{http_code} %{ssl_verify_result}', `https://${FW}:8443/api/v1/auth/register`]);
    assert.equal(first.stdout, '200 0', `${first.stderr}\n${lab.log}`);
    assert.notEqual(curl([`https://${FW}:8443/`]).status, 0, 'without the CA the client refuses');
    for (const [flag, accepted] of [['-tls1_2', true], ['-tls1_3', true], ['-tls1_1', false], ['-tls1', false]] as const) {
      const hello = inClient('openssl', ['s_client', '-connect', `${FW}:8443`, flag, '-cipher', 'DEFAULT:@SECLEVEL=0', '-CAfile', caFile]);
      if (accepted) assert.match(hello.stdout, /Verify return code: 0 \(ok\)/, `${flag}: ${hello.stderr}`);
      else assert.match(hello.stderr, /alert protocol version/, `${flag} refused by the server: ${hello.stderr}`);
    }

    // The dashboard WebSocket over wss, from the client namespace, trusting the local CA.
    const ticket = lab.call('POST', '/api/v1/auth/ws-ticket', undefined, 200).ticket as string;
    const script = `const { WebSocket } = require('ws'); const ws = new WebSocket('wss://${FW}:8443/api/v1/ws?ticket=${ticket}', { ca: require('fs').readFileSync('${caFile}') });
      ws.once('message', (m) => { console.log('frame ' + Object.keys(JSON.parse(m.toString())).length); ws.terminate(); });
      ws.once('unexpected-response', (_q, r) => { console.log('refused ' + r.statusCode); process.exit(1); }); ws.once('error', (e) => { console.log(e.message); process.exit(1); });`;
    const wss = spawnSync('ip', ['netns', 'exec', client, process.execPath, '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
    assert.match(wss.stdout, /^frame \d+/, `${wss.stdout}${wss.stderr}`);

    // An ACME certificate from pebble through the local-tls-store target.
    lab.call('POST', '/api/v1/acme/account', { contact_email: 'admin@b37.test', directory_url: `https://${CA}:14000/dir`, http01_listen: `${FW_CA}:80`, allowed_networks: [`${CA}/32`] }, 200);
    const cert = lab.call('POST', '/api/v1/acme/certs', { common_name: NAME, sans: ['admin.b37.test'], challenge_type: 'http-01' });
    lab.call('POST', `/api/v1/acme/certs/${cert.id}/targets`, { kind: 'local-tls-store' });
    const issued = lab.call('POST', `/api/v1/acme/certs/${cert.id}/renew`, undefined, 200);
    assert.equal(issued.ok, true, `${JSON.stringify(issued)}\n${pebbleLog.slice(-1500)}`);
    const pem = (text: string) => spawnSync('openssl', ['x509', '-noout', '-serial'], { input: text, encoding: 'utf8' }).stdout.trim().replace('serial=', '');
    const localSerial = served();
    lab.call('PUT', '/api/v1/settings/tls', { acme_cert_id: cert.id });
    const acmeSerial = pem(lab.call('GET', `/api/v1/acme/certs/${cert.id}/cert.pem`));
    assert.notEqual(acmeSerial, localSerial);
    assert.equal(served(NAME), acmeSerial, 'new connections get the ACME certificate');
    const pebbleRoot = spawnSync('ip', ['netns', 'exec', ca, 'curl', '-sS', '--noproxy', '*', '--cacert', pebbleCert, `https://${CA}:15000/roots/0`], { encoding: 'utf8' }).stdout;
    const rootFile = join(lab.dataDir, 'pebble-root.pem');
    writeFileSync(rootFile, pebbleRoot);
    const viaName = curl(['--cacert', rootFile, '--resolve', `${NAME}:8443:${FW}`, '-o', '/dev/null', '-w', '%{http_code} %{ssl_verify_result}', `https://${NAME}:8443/api/v1/auth/register`]);
    assert.equal(viaName.stdout, '200 0', `a client trusting pebble's root reaches the console by its name: ${viaName.stderr}`);
    const status = lab.call('GET', '/api/v1/settings/tls/status');
    assert.equal(status.serving.source, 'acme');
    assert.equal(status.listening, `${FW}:8443`);

    // A renewal is served at once, by the same process.
    const bulwarkPid = () => spawnSync('ip', ['netns', 'pids', fw], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean)
      .find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('src/main.ts'));
    const pid = bulwarkPid();
    assert.ok(pid);
    const renewed = lab.call('POST', `/api/v1/acme/certs/${cert.id}/renew`, undefined, 200);
    assert.equal(renewed.ok, true, JSON.stringify(renewed));
    const renewedSerial = pem(lab.call('GET', `/api/v1/acme/certs/${cert.id}/cert.pem`));
    assert.notEqual(renewedSerial, acmeSerial);
    assert.equal(served(NAME), renewedSerial, 'the renewal is served');
    assert.equal(bulwarkPid(), pid, 'by the same Bulwark process');
    const targets = lab.call('GET', `/api/v1/acme/certs/${cert.id}/targets`) as { kind: string; last_run_ok: boolean }[];
    assert.deepEqual(targets.map((t) => [t.kind, t.last_run_ok]), [['local-tls-store', true]]);
  } finally {
    if (extraCa === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
    else process.env.NODE_EXTRA_CA_CERTS = extraCa;
    await lab.cleanup();
  }
});
