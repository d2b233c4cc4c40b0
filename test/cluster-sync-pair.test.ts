/**
 * Configuration sync between two Bulwark processes (issue 39 item 3), each with its own data directory and HTTPS
 * listener on loopback (simulated platform: what is proven is the sync, not VRRP). Each node reaches the other
 * through a TCP relay this test owns, so the test can cut the link between them.
 *
 * Pairing with a wrong pin or a wrong code fails; pairing with both works. A rule and a WireGuard tunnel applied
 * on A are held and applied by B (same shared hash, a `cluster-sync` version on B), B's node-local sections (role,
 * host name) stay its own; the tunnel's private key is never served in clear by either API nor on the wire, and
 * opens with B's own sealing key. B's certificate changed (its CA re-created): A refuses to send, until the
 * administrator pins the new key. The link cut and a change applied on each side: both report split-brain,
 * nothing is overwritten, and the administrator's choice of a side resolves it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { Sealer, loadOrCreateKeyFile } from '../src/core/crypto.js';
import { spkiSha256 } from '../src/net/spki-pin.js';
import { generateKeyPair } from '../src/areas/vpn/wireguard.js';
import { freePort } from './helpers/free-port.js';
import { systemSkip } from './helpers/system-skip.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Deadlines, not figures: starting from sources takes long on a loaded machine. */
const START_DEADLINE_MS = 180_000;
const SYNC_DEADLINE_MS = 60_000;

interface Node {
  name: string;
  dir: string;
  http: number;
  https: number;
  child: ChildProcess;
  log: string;
  headers: Record<string, string>;
}

/** A TCP relay to a node's HTTPS port, which the test can cut (every connection ended, no new ones) and restore. */
class Relay {
  port = 0;
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  constructor(private readonly target: number) {}

  async open(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = tcpConnect(this.target, '127.0.0.1');
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => this.sockets.delete(socket));
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}

/** pebble, the ACME CA of the cert-push test, on loopback; its TLS certificate is made before the nodes start. */
const pebbleSkip = systemSkip('the cert-push test (an ACME CA)', { programs: ['pebble', 'openssl'] });
const pebble: { dir: string; cert: string; port: number; child: ChildProcess | null; log: string } = { dir: '', cert: '', port: 0, child: null, log: '' };

function preparePebble(): void {
  if (pebbleSkip) return;
  pebble.dir = mkdtempSync(join(tmpdir(), 'bulwark-hasync-pebble-'));
  pebble.cert = join(pebble.dir, 'cert.pem');
  const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', join(pebble.dir, 'key.pem'), '-out', pebble.cert, '-days', '2', '-subj', '/CN=pebble', '-addext', 'subjectAltName=IP:127.0.0.1'], { encoding: 'utf8' });
  assert.equal(made.status, 0, made.stderr);
}

async function startPebble(): Promise<void> {
  pebble.port = await freePort();
  const config = join(pebble.dir, 'pebble.json');
  writeFileSync(config, JSON.stringify({ pebble: { listenAddress: `127.0.0.1:${pebble.port}`, managementListenAddress: `127.0.0.1:${await freePort()}`, certificate: pebble.cert, privateKey: join(pebble.dir, 'key.pem'), httpPort: 80, tlsPort: 443, ocspResponderURL: '', externalAccountBindingRequired: false } }));
  // Every challenge valid: what is proven is the renewal's push to the peer, not the validation (test/e2e/acme-pebble.test.ts).
  pebble.child = spawn('pebble', ['-config', config], { env: { ...process.env, PEBBLE_VA_ALWAYS_VALID: '1', PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const stream of [pebble.child.stdout!, pebble.child.stderr!]) stream.on('data', (chunk: Buffer) => (pebble.log = (pebble.log + chunk.toString()).slice(-4000)));
  await until('pebble listens', async () => /Listening on/.test(pebble.log), 30_000);
}

const nodes: Node[] = [];
const relays: Relay[] = [];
let A: Node;
let B: Node;
let toA: Relay;
let toB: Relay;

async function startNode(name: string): Promise<Node> {
  const dir = mkdtempSync(join(tmpdir(), `bulwark-hasync-${name}-`));
  const http = await freePort();
  const https = await freePort();
  // Both trust the test's ACME CA (pebble) and nothing else more.
  const env = pebble.cert ? { ...process.env, NODE_EXTRA_CA_CERTS: pebble.cert } : process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/main.ts'), '--listen', `127.0.0.1:${http}`, '--tls-listen', `127.0.0.1:${https}`, '--data-dir', dir, '--log-level', 'warn'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const node: Node = { name, dir, http, https, child, log: '', headers: {} };
  child.stdout!.on('data', (chunk: Buffer) => (node.log = (node.log + chunk.toString()).slice(-6000)));
  child.stderr!.on('data', (chunk: Buffer) => (node.log = (node.log + chunk.toString()).slice(-6000)));
  nodes.push(node);
  return node;
}

async function signIn(node: Node): Promise<void> {
  const base = `http://127.0.0.1:${node.http}`;
  await until(`${node.name} answers`, async () => (await fetch(`${base}/api/v1/about`).catch(() => null)) !== null, START_DEADLINE_MS);
  // A failure here names the node's own output (a node that exited, or lost its port to another process, says why).
  const post = (path: string, body: unknown) => fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    .catch((error: Error) => { throw new Error(`${node.name}: POST ${path}: ${error.message} (${(error.cause as Error | undefined)?.message}); exit code ${node.child.exitCode}\n${node.log}`); });
  await post('/api/v1/auth/register', { username: 'admin', password: 'Adm1n-password!' });
  const { access_token } = await (await post('/api/v1/auth/login', { username: 'admin', password: 'Adm1n-password!' })).json() as { access_token: string };
  node.headers = { authorization: `Bearer ${access_token}` };
}

async function call(node: Node, method: string, path: string, body?: unknown): Promise<{ status: number; body: any; text: string }> {
  const response = await fetch(`http://127.0.0.1:${node.http}${path}`, {
    method, headers: { ...node.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // a text answer
  }
  return { status: response.status, body: parsed, text };
}

async function ok(node: Node, method: string, path: string, body?: unknown, expected = 200): Promise<any> {
  const answer = await call(node, method, path, body);
  assert.equal(answer.status, expected, `${node.name}: ${method} ${path} → ${answer.status} ${answer.text}\n${node.log}`);
  return answer.body;
}

async function until(what: string, check: () => Promise<boolean>, deadlineMs = SYNC_DEADLINE_MS): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${deadlineMs / 1000} s\nA: ${A?.log}\nB: ${B?.log}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const syncStatus = async (node: Node) => (await ok(node, 'GET', '/api/v1/cluster/status')).config_sync;
const ruleIds = async (node: Node): Promise<string[]> => (await ok(node, 'GET', '/api/v1/rules?limit=1000')).map((rule: { id: string }) => rule.id);

/** The key (SPKI) pin of the certificate a node's HTTPS listener serves now. */
function servedPin(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const pin = spkiSha256(socket.getPeerX509Certificate()!);
      socket.end();
      resolve(pin);
    });
    socket.once('error', reject);
  });
}

before(async () => {
  preparePebble();
  [A, B] = await Promise.all([startNode('a'), startNode('b')]);
  await Promise.all([signIn(A), signIn(B)]);
  toA = new Relay(A.https);
  toB = new Relay(B.https);
  relays.push(toA, toB);
  await toA.open();
  await toB.open();
  await ok(A, 'PUT', '/api/v1/system/general', { hostname: 'node-a' });
  await ok(B, 'PUT', '/api/v1/system/general', { hostname: 'node-b' });
  await ok(A, 'PUT', '/api/v1/cluster/role', { role: 'primary' });
  await ok(B, 'PUT', '/api/v1/cluster/role', { role: 'secondary' });
  await ok(A, 'POST', '/api/v1/reload');
  await ok(B, 'POST', '/api/v1/reload');
}, { timeout: 240_000 });

after(async () => {
  pebble.child?.kill('SIGTERM');
  if (pebble.dir) rmSync(pebble.dir, { recursive: true, force: true });
  for (const relay of relays) await relay.cut();
  for (const node of nodes) {
    if (node.child.exitCode === null) {
      const exited = new Promise((resolve) => node.child.once('exit', resolve));
      node.child.kill('SIGTERM');
      await exited;
    }
    rmSync(node.dir, { recursive: true, force: true });
  }
});

let peerOnA = '';
let peerOnB = '';
let tunnelKey = '';

// Node 20 counts the file's before hook (both nodes starting from sources) into the first test's time.
test('pairing: a wrong pin is refused before the code is sent, a wrong code is refused, the right pin and code pair both nodes', { timeout: 240_000 }, async () => {
  const code = await ok(B, 'POST', '/api/v1/cluster/pairing-code', undefined, 201);
  assert.match(code.code, /^bwpair_[0-9a-f]{32}$/);
  assert.equal(code.fingerprint, await servedPin(B.https), "the pin shown is the key B's HTTPS listener serves");
  const pair = (fingerprint: string, pairingCode: string) => call(A, 'POST', '/api/v1/cluster/nodes', { name: 'node-b', address: '127.0.0.1', port: toB.port, fingerprint, pairing_code: pairingCode });
  const wrongPin = await pair('ab'.repeat(32), code.code);
  assert.equal(wrongPin.status, 400, wrongPin.text);
  assert.match(wrongPin.body.error, /body\.fingerprint: .*pinned key/);
  const wrongCode = await pair(code.fingerprint, 'bwpair_00000000000000000000000000000000');
  assert.equal(wrongCode.status, 400, wrongCode.text);
  assert.match(wrongCode.body.error, /body\.pairing_code: the peer refused it: wrong pairing code/);
  assert.deepEqual(await ok(A, 'GET', '/api/v1/cluster/nodes'), [], 'nothing recorded by refused pairings');
  const paired = await pair(code.fingerprint, code.code);
  assert.equal(paired.status, 201, paired.text);
  peerOnA = paired.body.id;
  assert.equal(paired.body.fingerprint, code.fingerprint);
  const again = await pair(code.fingerprint, code.code);
  assert.equal(again.status, 409, 'one peer per node');
  const [onB] = await ok(B, 'GET', '/api/v1/cluster/nodes');
  peerOnB = onB.id;
  assert.equal(onB.address, '127.0.0.1', 'B recorded A at the address the pairing call came from');
  assert.equal(onB.port, A.https);
  assert.equal(onB.fingerprint, await servedPin(A.https), "B pins the key A's HTTPS listener serves");
  // B reaches A through the test's relay (as an administrator sets a NATed port).
  await ok(B, 'PUT', `/api/v1/cluster/nodes/${peerOnB}`, { port: toA.port });
  const keys = await ok(A, 'GET', '/api/v1/auth/api-keys');
  const listed = (Array.isArray(keys) ? keys : keys.keys ?? keys.items) as { name: string; permissions: string[] }[];
  const peerKey = listed.find((key) => key.name.startsWith('cluster-peer:'));
  assert.deepEqual(peerKey?.permissions, ['ha:manage'], 'A holds the key B presents to it: ha:manage only');
});

test('a rule and a WireGuard tunnel applied on A are held and applied by B; the secret travels sealed and is never served in clear', { timeout: 90_000 }, async () => {
  const rule = await ok(A, 'POST', '/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: 2323, quick: true, description: 'synced to B' }, 201);
  const pair = generateKeyPair();
  tunnelKey = pair.private_key;
  const tunnel = await ok(A, 'POST', '/api/v1/vpn/wg', { name: 'pairvpn', listen_port: 51830, address: '10.39.0.1/24', private_key: tunnelKey }, 201);
  const started = performance.now();
  await ok(A, 'POST', '/api/v1/reload');
  await until('B holds the rule', async () => (await ruleIds(B)).includes(rule.id));
  const latencyMs = performance.now() - started;
  // The push after the apply records its outcome once B answered what it holds, which can come after B's status (or
  // A's 10 s comparison) already shows the same head: wait for the push of A's current head itself.
  await until('both report in_sync with the same hash, and A recorded the push of its head', async () => {
    const [a, b] = [await syncStatus(A), await syncStatus(B)];
    return a.state === 'in_sync' && b.state === 'in_sync' && a.local.hash === b.local.hash && a.local.seq === b.local.seq && a.last_push?.seq === a.local.seq;
  });
  const a = await syncStatus(A);
  assert.equal(a.last_push.ok, true);
  assert.equal(await (await call(A, 'GET', '/api/v1/cluster/snapshot/hash')).text, await (await call(B, 'GET', '/api/v1/cluster/snapshot/hash')).text);
  const history = await ok(B, 'GET', '/api/v1/config/history?limit=5');
  assert.equal(history[0].source, 'cluster-sync', 'B applied it through its own apply path and recorded a version');
  assert.equal(history[0].version, a.last_push.peer_version, `A recorded the version B answered: ${JSON.stringify({ a, history: history.map((h: Record<string, unknown>) => [h.version, h.source, h.comment]) })}`);
  const onB = await ok(B, 'GET', `/api/v1/vpn/wg/${tunnel.id}`);
  assert.equal(onB.public_key, pair.public_key);
  // Node-local sections stay each node's own.
  assert.equal((await ok(B, 'GET', '/api/v1/cluster/role')).role, 'secondary');
  assert.equal((await ok(B, 'GET', '/api/v1/system/general')).hostname, 'node-b');
  // The secret: never in clear from either API, nor on the wire; at rest on B sealed with B's own key, and it opens.
  for (const node of [A, B]) {
    for (const path of [`/api/v1/vpn/wg/${tunnel.id}`, '/api/v1/cluster/snapshot', '/api/v1/cluster/status', `/api/v1/config/version?version=${(await ok(node, 'GET', '/api/v1/config/version')).version}`]) {
      const answer = await call(node, 'GET', path);
      assert.equal(answer.status, 200, `${node.name} ${path}: ${answer.text}`);
      assert.ok(!answer.text.includes(tunnelKey), `${node.name} ${path} serves the private key in clear`);
    }
  }
  const db = new Database(join(B.dir, 'bulwark.db'), { readonly: true });
  const row = db.prepare('SELECT data FROM config_objects WHERE id = ?').get(tunnel.id) as { data: string };
  db.close();
  const sealed = JSON.parse(row.data).private_key as string;
  assert.ok(Sealer.isSealed(sealed), 'sealed at rest on B');
  assert.equal(new Sealer(loadOrCreateKeyFile(join(B.dir, 'secrets.key'))).open(sealed), tunnelKey, "and usable: it opens with B's own key");
  console.log(`# figure: rule applied on A held by B ${Math.round(latencyMs)} ms after A's reload answered; push took ${a.last_push.ms} ms`);
});

test("B's certificate changed: A refuses to send until the administrator pins the new key", { timeout: 90_000 }, async () => {
  const before = await servedPin(B.https);
  await ok(B, 'POST', '/api/v1/ca', {}, 201);
  await until("B serves a new certificate key", async () => (await servedPin(B.https)) !== before);
  const rule = await ok(A, 'POST', '/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: 2424, quick: true, description: 'after the certificate changed' }, 201);
  await ok(A, 'POST', '/api/v1/reload');
  const pushed = await call(A, 'POST', '/api/v1/cluster/sync/push');
  assert.equal(pushed.status, 502, pushed.text);
  assert.match(pushed.body.error, /does not carry the pinned key/);
  const status = await syncStatus(A);
  assert.equal(status.last_push.ok, false);
  assert.match(status.last_error, /pinned key/);
  assert.ok(!(await ruleIds(B)).includes(rule.id), 'nothing reached B');
  await ok(A, 'PUT', `/api/v1/cluster/nodes/${peerOnA}`, { fingerprint: await servedPin(B.https) });
  const repinned = await ok(A, 'POST', '/api/v1/cluster/sync/push');
  assert.equal(repinned.ok, true);
  assert.ok((await ruleIds(B)).includes(rule.id));
});

test('a snapshot from anyone but the paired peer is refused', { timeout: 30_000 }, async () => {
  const snapshot = await ok(A, 'GET', '/api/v1/cluster/snapshot');
  const byAdmin = await call(B, 'PUT', '/api/v1/cluster/snapshot', snapshot);
  assert.equal(byAdmin.status, 403, 'an administrator (ha:manage) is not the peer');
});

test("a peer key revoked: both nodes report the pair without a key, sync skips it saying why; generate-key and registering the new key on the peer restore it", { timeout: 90_000 }, async () => {
  const listKeys = async () => {
    const keys = await ok(A, 'GET', '/api/v1/auth/api-keys');
    return (Array.isArray(keys) ? keys : keys.keys ?? keys.items) as { id: string; name: string; permissions: string[] }[];
  };
  const old = (await listKeys()).find((key) => key.name === `cluster-peer:${peerOnA}`)!;
  await ok(A, 'DELETE', `/api/v1/auth/api-keys/${old.id}`, undefined, 204);
  const summary = await ok(A, 'GET', '/api/v1/cluster/health-summary');
  assert.deepEqual(summary.missing_peer_keys, ['node-b']);
  const onA = await syncStatus(A);
  assert.equal(onA.state, 'no_key');
  assert.equal(onA.keys.inbound, 'revoked');
  assert.match(onA.keys.problem, /generate-key/);
  // B's next comparison is answered 401: B records that its key is refused and stops sending, saying why.
  await ok(B, 'PUT', `/api/v1/cluster/nodes/${peerOnB}`, {});
  await until('B reports its key refused', async () => (await syncStatus(B)).keys.outbound === 'refused');
  assert.equal((await syncStatus(B)).state, 'no_key');
  const skipped = await call(B, 'POST', '/api/v1/cluster/sync/push');
  assert.equal(skipped.status, 412, skipped.text);
  assert.match(skipped.body.error, /not sent: node-a refused the key this node presents/);
  assert.match((await syncStatus(B)).last_push.error, /^not sent: /);
  assert.deepEqual((await ok(B, 'GET', '/api/v1/cluster/health-summary')).missing_peer_keys, ['node-a']);
  // A new key, shown once on A, registered on B.
  const generated = await ok(A, 'POST', `/api/v1/cluster/nodes/${peerOnA}/generate-key`);
  assert.match(generated.key, /^bwk_[0-9a-f]{64}$/);
  const fresh = (await listKeys()).find((key) => key.name === `cluster-peer:${peerOnA}`);
  assert.deepEqual(fresh?.permissions, ['ha:manage']);
  assert.ok(!JSON.stringify(await listKeys()).includes(generated.key), 'the key is not listed in clear');
  const registered = await call(B, 'PUT', `/api/v1/cluster/nodes/${peerOnB}`, { key: generated.key });
  assert.equal(registered.status, 200, registered.text);
  assert.ok(!registered.text.includes(generated.key), 'the registered key is write-only');
  assert.deepEqual(registered.body.keys, { inbound: 'ok', outbound: 'ok', problem: null });
  await until('both pair again without a key problem', async () => {
    const [a, b] = [await syncStatus(A), await syncStatus(B)];
    return a.keys.problem === null && b.keys.problem === null && b.state === 'in_sync' && a.state === 'in_sync';
  });
  assert.deepEqual((await ok(A, 'GET', '/api/v1/cluster/health-summary')).missing_peer_keys, []);
  assert.deepEqual((await ok(B, 'GET', '/api/v1/cluster/health-summary')).missing_peer_keys, []);
});

test('an ACME certificate renewed on the primary is pushed to the backup, its key sealed, and installed there; the backup does not renew', { skip: pebbleSkip, timeout: 120_000 }, async () => {
  await startPebble();
  await ok(A, 'POST', '/api/v1/acme/account', { contact_email: 'ha@example.org', directory_url: `https://127.0.0.1:${pebble.port}/dir`, allowed_networks: ['127.0.0.1/32'], http01_listen: `127.0.0.1:${await freePort()}` });
  const cert = await ok(A, 'POST', '/api/v1/acme/certs', { common_name: 'ha.b39.test', challenge_type: 'http-01' }, 201);
  await ok(A, 'POST', '/api/v1/reload');
  await until('B holds the certificate object', async () => (await call(B, 'GET', `/api/v1/acme/certs/${cert.id}`)).status === 200);
  const refused = await call(B, 'POST', `/api/v1/acme/certs/${cert.id}/renew`);
  assert.equal(refused.status, 409, refused.text);
  const renewed = await ok(A, 'POST', `/api/v1/acme/certs/${cert.id}/renew`);
  assert.equal(renewed.ok, true, `${JSON.stringify(renewed)}\n${pebble.log}`);
  await until('B installed the certificate A renewed', async () => (await ok(B, 'GET', `/api/v1/acme/certs/${cert.id}`)).has_cert === true);
  const [pemA, pemB] = [await call(A, 'GET', `/api/v1/acme/certs/${cert.id}/cert.pem`), await call(B, 'GET', `/api/v1/acme/certs/${cert.id}/cert.pem`)];
  assert.match(pemB.text, /BEGIN CERTIFICATE/);
  assert.equal(pemB.text, pemA.text, 'the same certificate and chain');
  const keyB = await call(B, 'GET', `/api/v1/acme/certs/${cert.id}/key.pem`);
  assert.equal(keyB.text, (await call(A, 'GET', `/api/v1/acme/certs/${cert.id}/key.pem`)).text, 'and its key');
  const pushed = (await syncStatus(A)).last_cert_push;
  assert.deepEqual({ cert_id: pushed.cert_id, ok: pushed.ok, error: pushed.error }, { cert_id: cert.id, ok: true, error: null });
  assert.equal((await ok(A, 'GET', `/api/v1/cluster/nodes/${peerOnA}`)).last_pushed_cert_at, pushed.at);
  // What travels: the key sealed for the peer, the body under the pair's HMAC. An administrator may not push one.
  const forged = await call(B, 'POST', '/api/v1/cluster/cert-push', { cert_id: cert.id, fullchain_pem: pemA.text, private_key_pem: 'pw:v1:AAAA', sent_at: 'now', integrity: '0'.repeat(64) });
  assert.equal(forged.status, 403, forged.text);
  const onPrimary = await call(A, 'POST', '/api/v1/cluster/cert-push', { cert_id: cert.id, fullchain_pem: pemA.text, private_key_pem: 'pw:v1:AAAA', sent_at: 'now', integrity: '0'.repeat(64) });
  assert.equal(onPrimary.status, 403, 'the primary takes no certificate from an administrator either');
});

test('the link cut and a change on each side: split-brain on both, nothing overwritten; choosing a side resolves it', { timeout: 150_000 }, async () => {
  await toA.cut();
  await toB.cut();
  const onA = await ok(A, 'POST', '/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: 2525, quick: true, description: 'made on A while apart' }, 201);
  await ok(A, 'POST', '/api/v1/reload');
  await until('A reports the peer unreachable', async () => (await syncStatus(A)).state === 'unreachable');
  const onB = await ok(B, 'POST', '/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: 2626, quick: true, description: 'made on B while apart' }, 201);
  await ok(B, 'POST', '/api/v1/reload');
  await toA.open();
  await toB.open();
  const pushed = await call(A, 'POST', '/api/v1/cluster/sync/push');
  assert.equal(pushed.status, 502, pushed.text);
  assert.match(pushed.body.error, /split-brain/);
  await until('both report split-brain', async () => (await syncStatus(A)).state === 'split_brain' && (await syncStatus(B)).state === 'split_brain');
  const reported = await syncStatus(B);
  assert.ok(reported.split_brain.local_head && reported.split_brain.peer_head);
  const rulesOnB = await ruleIds(B);
  assert.ok(rulesOnB.includes(onB.id) && !rulesOnB.includes(onA.id), "B's change is not silently overwritten");
  assert.ok(!(await ruleIds(A)).includes(onB.id));
  // The administrator keeps A's side, from B.
  const resolved = await ok(B, 'POST', '/api/v1/cluster/sync/resolve', { keep: 'peer' });
  assert.equal(resolved.kept, 'peer');
  const after = await ruleIds(B);
  assert.ok(after.includes(onA.id) && !after.includes(onB.id), "B now holds A's configuration");
  await ok(A, 'POST', '/api/v1/cluster/sync/push');
  await until('both in sync again', async () => (await syncStatus(A)).state === 'in_sync' && (await syncStatus(B)).state === 'in_sync');
  assert.equal((await syncStatus(A)).split_brain, null);
});
