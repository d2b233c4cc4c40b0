/**
 * ACME proven against Debian's pebble, in four namespaces the test creates: pebble in a CA namespace, resolving
 * through BIND (every name: the firewall's address); Bulwark (`--platform linux`) with
 * Caddy in a firewall namespace; a back end; a client; BIND authoritative for the test zone in the CA namespace. Proven: an order placed through the outbound guard
 * (the CA's private network allowed in the account), HTTP-01 answered by the built-in responder and validated
 * by pebble over the network, the certificate published to a file export target with its owner and modes, the
 * client reaching the back end through Caddy over TLS with the ACME certificate, and a renewal replacing the
 * certificate Caddy serves without restarting it; a publish by hand rewriting the exported files Caddy serves and
 * reloading it; HTTP-01 answered through Caddy when it holds port 80; and DNS-01 for a wildcard through an RFC 2136 provider (TSIG
 * updates to BIND, checked by pebble, removed afterwards).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemAccount } from '../../src/platform/daemon-runtime.js';
import { systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';
import { NetnsLab } from '../helpers/netns-lab.js';

const skipReason = () => systemSkip('the ACME namespace lab', {
  root: true,
  programs: ['pebble', 'named', 'nsupdate', 'dig', 'caddy', 'curl', 'openssl', 'ip', 'setpriv'],
  users: ['caddy', 'bind'],
});

const FW = '10.216.20.1';
const CLIENT = '10.216.20.2';
const FW_BACK = '10.216.21.1';
const BACKEND = '10.216.21.2';
const FW_CA = '10.216.22.1';
const CA = '10.216.22.2';
const NAME = 'three.b16.test';

function caddyPid(ns: string): number | null {
  for (const pid of spawnSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean)) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'caddy') return Number(pid);
    } catch {
      // gone
    }
  }
  return null;
}

test('pebble issues through HTTP-01 answered by Bulwark and DNS-01 published by RFC 2136; Caddy serves the certificate; a renewal is served without a restart', { skip: skipReason(), timeout: 300_000 }, async () => {
  const lab = new NetnsLab('b16s');
  const extraCa = process.env.NODE_EXTRA_CA_CERTS;
  let namedDir = '';
  try {
    const fw = lab.namespace('fw');
    const client = lab.namespace('cl');
    const server = lab.namespace('be');
    const ca = lab.namespace('ca');
    lab.link({ ns: fw, name: `b16f${lab.tag}`, address: `${FW}/24` }, { ns: client, name: `b16c${lab.tag}`, address: `${CLIENT}/24` });
    lab.link({ ns: fw, name: `b16g${lab.tag}`, address: `${FW_BACK}/24` }, { ns: server, name: `b16s${lab.tag}`, address: `${BACKEND}/24` });
    lab.link({ ns: fw, name: `b16h${lab.tag}`, address: `${FW_CA}/24` }, { ns: ca, name: `b16a${lab.tag}`, address: `${CA}/24` });
    lab.spawnIn(server, process.execPath, ['-e', `require('http').createServer((q,r)=>r.end('backend three host='+q.headers.host)).listen(8083,'${BACKEND}')`]);

    // pebble's own TLS certificate, trusted by Bulwark (NODE_EXTRA_CA_CERTS) and nothing else.
    const pebbleCert = join(lab.dataDir, 'pebble-cert.pem');
    const pebbleKey = join(lab.dataDir, 'pebble-key.pem');
    spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', pebbleKey, '-out', pebbleCert, '-days', '2', '-subj', '/CN=pebble', '-addext', `subjectAltName=IP:${CA}`], { encoding: 'utf8' });
    const config = join(lab.dataDir, 'pebble.json');
    writeFileSync(config, JSON.stringify({ pebble: { listenAddress: `${CA}:14000`, managementListenAddress: `${CA}:15000`, certificate: pebbleCert, privateKey: pebbleKey, httpPort: 80, tlsPort: 443, ocspResponderURL: '', externalAccountBindingRequired: false } }));
    // BIND, authoritative for b16.test: every name resolves to the firewall's address on the CA side (pebble
    // validates HTTP-01 there), and TXT records under the zone may be changed with the TSIG key (DNS-01).
    const bindDir = mkdtempSync(join(tmpdir(), 'b16-named-'));
    namedDir = bindDir;
    const bind = systemAccount('bind')!;
    chownSync(bindDir, bind.uid, bind.gid);
    const tsigSecret = randomBytes(32).toString('base64');
    writeFileSync(join(bindDir, 'b16.test.zone'), ['$TTL 60', '@ IN SOA ns.b16.test. admin.b16.test. 1 60 60 600 60', '@ IN NS ns.b16.test.', `ns IN A ${CA}`, `@ IN A ${FW_CA}`, `* IN A ${FW_CA}`, ''].join('\n'));
    writeFileSync(join(bindDir, 'named.conf'), [
      `options { directory "${bindDir}"; listen-on port 53 { 127.0.0.1; ${CA}; }; listen-on-v6 { none; }; recursion no; allow-query { any; }; dnssec-validation no; querylog yes; pid-file "${bindDir}/named.pid"; session-keyfile "${bindDir}/session.key"; };`,
      `key "b16-acme" { algorithm hmac-sha256; secret "${tsigSecret}"; };`,
      `zone "b16.test" { type primary; file "${bindDir}/b16.test.zone"; update-policy { grant b16-acme zonesub TXT; }; };`,
      '',
    ].join('\n'));
    for (const file of ['b16.test.zone', 'named.conf']) chownSync(join(bindDir, file), bind.uid, bind.gid);
    const named = lab.spawnIn(ca, 'named', ['-g', '-4', '-u', 'bind', '-c', join(bindDir, 'named.conf')]);
    let namedLog = '';
    named.stdout!.on('data', (chunk: Buffer) => (namedLog += chunk.toString()));
    named.stderr!.on('data', (chunk: Buffer) => (namedLog += chunk.toString()));
    const digCa = (name: string, type: string) => spawnSync('ip', ['netns', 'exec', ca, 'dig', '+short', '+time=1', '+tries=1', '@127.0.0.1', name, type], { encoding: 'utf8' }).stdout.trim();
    for (let i = 0; i < 50 && digCa(NAME, 'A') !== FW_CA; i++) await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(digCa(NAME, 'A'), FW_CA, 'named answers for the zone');
    const pebble = lab.spawnIn(ca, 'env', ['PEBBLE_VA_NOSLEEP=1', 'PEBBLE_WFE_NONCEREJECT=0', 'pebble', '-config', config, '-dnsserver', '127.0.0.1:53']);
    let pebbleLog = '';
    pebble.stdout!.on('data', (chunk: Buffer) => (pebbleLog += chunk.toString()));
    pebble.stderr!.on('data', (chunk: Buffer) => (pebbleLog += chunk.toString()));

    process.env.NODE_EXTRA_CA_CERTS = pebbleCert;
    lab.startBulwark(fw, await freePort());

    lab.call('POST', '/api/v1/acme/account', { contact_email: 'admin@b16.test', directory_url: `https://${CA}:14000/dir`, http01_listen: `${FW_CA}:80`, allowed_networks: [`${CA}/32`] }, 200);
    const cert = lab.call('POST', '/api/v1/acme/certs', { common_name: NAME, challenge_type: 'http-01', auto_renew: true });
    const exported = join(lab.dataDir, 'certs', 'b16', 'three.pem');
    const target = lab.call('POST', `/api/v1/acme/certs/${cert.id}/targets`, { kind: 'file', config: { cert_path: exported, key_path: join(lab.dataDir, 'certs', 'b16', 'three.key'), owner: 'caddy:caddy', mode: '0640', key_mode: '0640' } });

    const issued = lab.call('POST', `/api/v1/acme/certs/${cert.id}/renew`, undefined, 200);
    // lab.call is synchronous: let pebble's output in before reading it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(issued.ok, true, `${JSON.stringify(issued)}\n${pebbleLog.slice(-2000)}\n${lab.log}`);
    assert.match(pebbleLog, /Attempting to validate w\/ HTTP: http:\/\/three\.b16\.test:80\/\.well-known\/acme-challenge\//, 'pebble fetched the HTTP-01 token over the network');
    assert.match(pebbleLog, /set VALID by completed challenge/, 'and found the key authorisation Bulwark served');
    const record = lab.call('GET', `/api/v1/acme/certs/${cert.id}`);
    assert.equal(record.status, 'active');
    assert.equal(record.has_cert, true);
    assert.equal(lab.call('GET', '/api/v1/acme/account').registered, true);

    // The export target: written with its owner and mode, recorded as run.
    const caddy = systemAccount('caddy')!;
    const stats = statSync(exported);
    assert.equal(stats.uid, caddy.uid);
    assert.equal(stats.mode & 0o777, 0o640);
    assert.match(readFileSync(exported, 'utf8'), /BEGIN CERTIFICATE[\s\S]+BEGIN CERTIFICATE/, 'the full chain');
    const targets = lab.call('GET', `/api/v1/acme/certs/${cert.id}/targets`) as { id: string; last_run_ok: boolean }[];
    assert.equal(targets.find((t) => t.id === target.id)?.last_run_ok, true);

    // The proxy serves the back end with the ACME certificate, by reference.
    const rp = '/api/v1/reverse-proxy';
    lab.call('POST', `${rp}/tls/certs`, { name: 'three', source: `acme:${cert.id}` });
    lab.call('POST', `${rp}/entrypoints`, { name: 'websecure', address: `${FW}:443` });
    // The back end sits on a private LAN: an administrator allow-lists it for the proxy (docs/security.md).
    lab.call('PUT', '/api/v1/settings/outbound', { allowed_addresses: [BACKEND] });
    lab.call('POST', `${rp}/http/services`, { name: 'three', service_type: 'loadBalancer', config_json: JSON.stringify({ servers: [{ url: `http://${BACKEND}:8083` }] }) });
    lab.call('POST', `${rp}/http/routers`, { name: 'r-three', rule: `Host(\`${NAME}\`)`, service: 'three', entry_points: '["websecure"]', tls_json: '{}' });
    lab.call('PUT', `${rp}/config`, { enabled: true, access_log_enabled: false });
    lab.call('POST', `${rp}/apply`);

    // The client trusts pebble's root only.
    const root = spawnSync('ip', ['netns', 'exec', ca, 'curl', '-sS', '--cacert', pebbleCert, `https://${CA}:15000/roots/0`], { encoding: 'utf8' }).stdout;
    assert.match(root, /BEGIN CERTIFICATE/, 'pebble root from its management interface');
    const rootFile = join(lab.dataDir, 'pebble-root.pem');
    writeFileSync(rootFile, root);
    const curl = () => spawnSync('ip', ['netns', 'exec', client, 'curl', '-sS', '--max-time', '15', '--cacert', rootFile, '--resolve', `${NAME}:443:${FW}`, `https://${NAME}/`], { encoding: 'utf8', timeout: 30_000 });
    const served = () => {
      const result = spawnSync('ip', ['netns', 'exec', client, 'sh', '-c', `echo | openssl s_client -connect ${FW}:443 -servername ${NAME} 2>/dev/null | openssl x509 -noout -serial`], { encoding: 'utf8', timeout: 30_000 });
      return /serial=([0-9A-F]+)/i.exec(result.stdout)?.[1] ?? 'none';
    };
    const pem = (text: string) => spawnSync('openssl', ['x509', '-noout', '-serial'], { input: text, encoding: 'utf8' }).stdout.trim().replace('serial=', '');
    const answer = curl();
    assert.equal(answer.stdout, `backend three host=${NAME}`, `${answer.stderr}\n${lab.log}`);
    const firstSerial = served();
    assert.equal(firstSerial, pem(lab.call('GET', `/api/v1/acme/certs/${cert.id}/cert.pem`)));
    const pid = caddyPid(fw);
    assert.ok(pid);

    // Renewal on demand: a new certificate, served by the same Caddy process.
    const renewed = lab.call('POST', `/api/v1/acme/certs/${cert.id}/renew`, undefined, 200);
    assert.equal(renewed.ok, true, JSON.stringify(renewed));
    const secondSerial = served();
    assert.notEqual(secondSerial, firstSerial, 'a new certificate is served');
    assert.equal(secondSerial, pem(lab.call('GET', `/api/v1/acme/certs/${cert.id}/cert.pem`)));
    assert.equal(caddyPid(fw), pid, 'without restarting Caddy');
    assert.equal(curl().stdout, `backend three host=${NAME}`);

    // Publish by hand: the proxy now serves the exported files; they are overwritten with a stale certificate (the
    // local CA's, same name) that the proxy picks up; POST publish writes the ACME certificate back and reloads
    // the running Caddy, which serves it again without a restart.
    const keyExported = join(lab.dataDir, 'certs', 'b16', 'three.key');
    const tlsThree = (lab.call('GET', `${rp}/tls/certs`) as { id: string; name: string }[]).find((item) => item.name === 'three')!;
    lab.call('PUT', `${rp}/tls/certs/${tlsThree.id}`, { source: null, cert_file: exported, key_file: keyExported });
    lab.call('POST', '/api/v1/ca', { common_name: 'b16s stale root' });
    const stale = lab.call('POST', '/api/v1/ca/certs', { cert_type: 'server', common_name: NAME, sans: [] });
    writeFileSync(exported, stale.certificate_pem);
    writeFileSync(keyExported, stale.private_key_pem);
    lab.call('POST', `${rp}/apply`);
    assert.equal(served(), pem(stale.certificate_pem), 'the proxy serves the overwritten files');
    const republished = lab.call('POST', `/api/v1/acme/certs/${cert.id}/publish`, undefined, 200);
    assert.deepEqual([republished.ok, republished.message], [true, 'published to every target; reloaded: reverse proxy']);
    assert.equal(served(), secondSerial, 'the published ACME certificate is served');
    assert.equal(caddyPid(fw), pid, 'by the same Caddy process');
    assert.equal(curl().stdout, `backend three host=${NAME}`);

    // DNS-01 for a wildcard: the TXT record is published to BIND by RFC 2136 (TSIG), pebble checks it, it is removed.
    const provider = lab.call('POST', '/api/v1/acme/dns-providers', { name: 'b16-bind', kind: 'rfc2136', zone: 'b16.test', api_token: tsigSecret, extra: { server: CA, key_name: 'b16-acme', algorithm: 'hmac-sha256' } });
    assert.equal(provider.has_token, true);
    const [badProvider] = lab.api(['POST', '/api/v1/acme/dns-providers', { name: 'b16-bad', kind: 'rfc2136', zone: 'b16.test', extra: { server: 'ns.b16.test; rm', key_name: 'k' } }]);
    assert.equal(badProvider.status, 400);
    assert.match(badProvider.body.error, /body\.extra\.server/);
    const wildcard = lab.call('POST', '/api/v1/acme/certs', { common_name: '*.b16.test', challenge_type: 'dns-01', dns_provider_id: provider.id });
    const dnsIssued = lab.call('POST', `/api/v1/acme/certs/${wildcard.id}/renew`, undefined, 200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(dnsIssued.ok, true, `${JSON.stringify(dnsIssued)}\n${pebbleLog.slice(-1500)}`);
    assert.match(namedLog, /10\.216\.22\.1#\d+\/key b16-acme: updating zone 'b16\.test\/IN': adding an RR at '_acme-challenge\.b16\.test' TXT/, 'the firewall published the record by RFC 2136, signed with the TSIG key');
    assert.match(namedLog, /127\.0\.0\.1#\d+ \(_acme-challenge\.b16\.test\): query: _acme-challenge\.b16\.test IN TXT/, 'pebble looked it up');
    assert.match(namedLog, /\/key b16-acme: updating zone 'b16\.test\/IN': deleting an RR at '?_acme-challenge\.b16\.test'? TXT/, 'and the firewall removed it again');
    const sans = spawnSync('openssl', ['x509', '-noout', '-ext', 'subjectAltName'], { input: lab.call('GET', `/api/v1/acme/certs/${wildcard.id}/cert.pem`), encoding: 'utf8' }).stdout;
    assert.match(sans, /DNS:\*\.b16\.test/);
    assert.equal(digCa('_acme-challenge.b16.test', 'TXT'), '', 'the challenge record was removed again');

    // HTTP-01 through the proxy: Caddy holds port 80 — on every address, then on the CA side's address only —
    // serving a route of its own there; the account keeps the default responder address (:80), which Caddy holds,
    // so the responder listens on loopback and plain-HTTP servers pass /.well-known/acme-challenge/ to it ahead of
    // the user's routes. pebble really fetches the token (no PEBBLE_VA_ALWAYS_VALID).
    lab.call('POST', `${rp}/entrypoints`, { name: 'web', address: ':80' });
    lab.call('POST', `${rp}/http/routers`, { name: 'r-web', rule: 'Host(`www.b16.test`)', service: 'three', entry_points: '["web"]' });
    lab.call('PUT', `${rp}/config`, { access_log_enabled: true, access_log_path: join(lab.dataDir, 'logs', 'access.log') });
    lab.call('POST', `${rp}/apply`);
    lab.call('POST', '/api/v1/acme/account', { contact_email: 'admin@b16.test', directory_url: `https://${CA}:14000/dir`, http01_listen: ':80', allowed_networks: [`${CA}/32`] }, 200);
    const plainRoute = () => spawnSync('ip', ['netns', 'exec', ca, 'curl', '-sS', '--max-time', '10', '--resolve', `www.b16.test:80:${FW_CA}`, 'http://www.b16.test/'], { encoding: 'utf8', timeout: 20_000 }).stdout;
    assert.equal(plainRoute(), 'backend three host=www.b16.test', 'the proxy serves its own route on port 80');
    const fetchedThroughCaddy = () => {
      const access = lab.call('GET', `${rp}/logs?log_type=access&search=acme-challenge`) as string[];
      return access.filter((line) => /^10\.216\.22\.2 - - \[.+\] "GET \/\.well-known\/acme-challenge\/[A-Za-z0-9_-]+ HTTP\/1\.1" 200 /.test(line)).length;
    };
    const throughProxy = async (name: string) => {
      const before = fetchedThroughCaddy();
      const order = lab.call('POST', '/api/v1/acme/certs', { common_name: name, challenge_type: 'http-01' });
      const answer = lab.call('POST', `/api/v1/acme/certs/${order.id}/renew`, undefined, 200);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(answer.ok, true, `${name}: ${JSON.stringify(answer)}\n${(lab.call('GET', `${rp}/logs?log_type=server&lines=20`) as string[]).join('\n')}`);
      assert.match(pebbleLog, new RegExp(`Attempting to validate w/ HTTP: http://${name.replace(/\./g, '\\.')}:80/\\.well-known/acme-challenge/`));
      assert.ok(fetchedThroughCaddy() > before, `${name}: pebble's fetch went through Caddy`);
    };
    await throughProxy('four.b16.test');
    assert.equal(plainRoute(), 'backend three host=www.b16.test', 'the route still serves');
    // Caddy on the CA side's address only: the responder's :80 still collides with it.
    const web = (lab.call('GET', `${rp}/entrypoints`) as { id: string; name: string }[]).find((item) => item.name === 'web')!;
    lab.call('PUT', `${rp}/entrypoints/${web.id}`, { address: `${FW_CA}:80` });
    lab.call('POST', `${rp}/apply`);
    await throughProxy('five.b16.test');
    // A loopback responder address named by the account is used as it is.
    lab.call('POST', '/api/v1/acme/account', { contact_email: 'admin@b16.test', directory_url: `https://${CA}:14000/dir`, http01_listen: '127.0.0.1:8403', allowed_networks: [`${CA}/32`] }, 200);
    await throughProxy('six.b16.test');
    assert.equal(plainRoute(), 'backend three host=www.b16.test');
    assert.equal(caddyPid(fw), pid, 'the proxy took the challenge route without a restart');
  } finally {
    if (extraCa === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
    else process.env.NODE_EXTRA_CA_CERTS = extraCa;
    await lab.cleanup();
    if (namedDir) rmSync(namedDir, { recursive: true, force: true });
  }
});
