/**
 * One streaming size cap for every download (issue 31 item 6): outboundFetch, the one way the appliance fetches
 * a URL, counts the bytes it reads and stops the transfer at the first byte past the cap, whatever the server
 * declared. Loopback servers lie about or omit Content-Length and stream more than the cap.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { outboundFetch } from '../src/net/outbound.js';
import { DEFAULT_DOWNLOAD_CAP_BYTES } from '../src/net/download-cap.js';
import { json } from './helpers/app.js';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';

const MiB = 1024 * 1024;
const LOOPBACK = { allowHttp: true, allowList: ['127.0.0.1/32'] };

/** How each response of the test server ended: `finished` only when every byte it meant to send was sent. */
interface Served {
  finished: boolean;
  sent: number;
}

let server: Server;
let base: string;
const served: Served[] = [];
/** What the next request to /body answers: `total` bytes of `line`, with or without a (possibly false) length. */
let plan: { total: number; declare?: number; line: string } = { total: 0, line: '' };

/** Streams `total` bytes as fast as the client reads them, stopping when the client goes away. */
function stream(response: ServerResponse, total: number, line: string, record: Served): void {
  const chunk = Buffer.from(line.repeat(Math.ceil(65536 / line.length))).subarray(0, 65536);
  const pump = () => {
    while (record.sent < total) {
      const piece = chunk.subarray(0, Math.min(chunk.length, total - record.sent));
      record.sent += piece.length;
      if (!response.write(piece)) return void response.once('drain', pump);
    }
    response.end(() => {
      record.finished = true;
    });
  };
  pump();
}

before(async () => {
  server = createServer((request, response) => {
    const record: Served = { finished: false, sent: 0 };
    served.push(record);
    const { total, declare, line } = plan;
    response.on('error', () => undefined);
    // No Content-Length: chunked, so only the bytes read can tell the size.
    response.writeHead(200, { 'content-type': 'text/plain', ...(declare !== undefined ? { 'content-length': String(declare) } : {}) });
    stream(response, total, line, record);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** The last response's record once the server saw it end (finished or the connection closed). */
async function lastServed(): Promise<Served> {
  const record = served.at(-1)!;
  const deadline = Date.now() + 10_000;
  // The server notices a closed connection a moment after the client stopped reading.
  while (!record.finished && Date.now() < deadline) {
    const before = record.sent;
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (record.sent === before) break;
  }
  return record;
}

test('a chunked answer without Content-Length that streams past the default cap is refused and the transfer stopped', async () => {
  plan = { total: DEFAULT_DOWNLOAD_CAP_BYTES + 32 * MiB, line: '# filler line of a rules file\n' };
  const response = await outboundFetch(`${base}/body`, {}, LOOPBACK);
  await assert.rejects(response.text(), (error: Error & { statusCode?: number }) => {
    assert.match(error.message, /^download from 127\.0\.0\.1:\d+ refused: more than the 64 MiB allowed \(the transfer was stopped, nothing was kept\)$/);
    assert.equal(error.statusCode, 502);
    return true;
  });
  const record = await lastServed();
  assert.equal(record.finished, false, 'the server was allowed to send everything');
  assert.ok(record.sent < plan.total, `the server sent ${record.sent} of ${plan.total} bytes`);
});

test('a caller\'s own cap applies to every way of reading the body (arrayBuffer, json, a stream loop)', async () => {
  plan = { total: 8 * MiB, line: 'x' };
  for (const read of [(r: Response) => r.arrayBuffer(), (r: Response) => r.json(), async (r: Response) => {
    for await (const _ of r.body as unknown as AsyncIterable<Uint8Array>) { /* drained */ }
  }]) {
    const response = await outboundFetch(`${base}/body`, {}, { ...LOOPBACK, maxBytes: MiB });
    await assert.rejects(read(response as unknown as Response), /refused: more than the 1 MiB allowed/);
    assert.equal((await lastServed()).finished, false);
  }
});

test('a declared Content-Length above the cap is refused before the body is read; the status stays readable', async () => {
  plan = { total: 4 * MiB, declare: 4 * MiB, line: 'y' };
  const response = await outboundFetch(`${base}/body`, {}, { ...LOOPBACK, maxBytes: MiB });
  assert.equal(response.status, 200, 'a caller that wants only the status (a gateway probe) still gets it');
  await assert.rejects(response.text(), /refused: it declares 4194304 bytes, more than the 1 MiB allowed/);
  assert.equal((await lastServed()).finished, false);
  // Cancelling the body instead (what a probe does) is not an error.
  const probed = await outboundFetch(`${base}/body`, {}, { ...LOOPBACK, maxBytes: MiB });
  await probed.body?.cancel();
  assert.equal((await lastServed()).finished, false);
});

test('an answer within the cap arrives whole, chunked or with its length', async () => {
  for (const declare of [undefined, 300_000]) {
    plan = { total: 300_000, declare, line: 'z' };
    const body = Buffer.from(await (await outboundFetch(`${base}/body`, {}, { ...LOOPBACK, maxBytes: 300_000 })).arrayBuffer());
    assert.equal(body.length, 300_000);
    assert.ok(body.every((byte) => byte === 0x7a));
  }
});

test('no HTTP client in src/ bypasses outboundFetch, so the cap covers IDS rulesets, url_table, blocklists, updates, object storage, ACME, AI and SSO', () => {
  const offenders: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        walk(path);
        continue;
      }
      // The controller's console page (src/controller/console/) is browser code held as text: it runs in the
      // administrator's browser against the controller's own API, never in Node.
      if (!path.endsWith('.ts') || path === join('src', 'net', 'outbound.ts') || path.startsWith(join('src', 'controller', 'console') + '/')) continue;
      for (const [index, line] of readFileSync(path, 'utf8').split('\n').entries()) {
        const where = `${path}:${index + 1}: ${line.trim()}`;
        // undici's clients (its Response class and types carry no request).
        const undici = /^import \{([^}]*)\} from 'undici'/.exec(line);
        if (undici && undici[1].split(',').map((n) => n.trim()).some((n) => n && !n.startsWith('type ') && n !== 'Response')) offenders.push(where);
        // The global fetch.
        if (/(?<![.\w])fetch\(/.test(line)) offenders.push(where);
        // node:http(s) clients; allowed: Caddy's admin API (a unix socket) and the update helper asking the API's own
        // listen address whether the new release answers (it reads nothing of the body).
        const ownEndpoint = [join('src', 'platform', 'linux', 'caddy.ts'), join('src', 'areas', 'updates', 'activation-helper.ts')];
        if (/from 'node:https?'/.test(line) && /\b(request|get)\b/.test(line) && !ownEndpoint.includes(path)) offenders.push(where);
      }
    }
  };
  walk('src');
  assert.deepEqual(offenders, []);
  assert.match(readFileSync(join('src', 'platform', 'linux', 'caddy.ts'), 'utf8'), /request\(\{ socketPath/, 'Caddy\'s admin client stays on its unix socket');
  // The fleet agent's mutually authenticated requests to its controller go through the guard too (privateTls).
  assert.match(readFileSync(join('src', 'agent', 'https-client.ts'), 'utf8'), /outboundFetch\(/);
});

let t: AreaApp;
test('DNS blocklist refresh: a source streaming past 50 MiB is refused, and the list in force keeps its last good copy', async () => {
  t = await startAreaApp();
  try {
    const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => json(await t.request(method, url, payload));
    // The administrator's outbound allow-list is what lets a blocklist source sit on loopback (docs/security.md).
    assert.deepEqual((await call('PUT', '/api/v1/settings/outbound', { allowed_addresses: ['127.0.0.1/32'] })).allowed_addresses, ['127.0.0.1/32']);
    await call('PUT', '/api/v1/dns/blocklists/schedule', { allow_http: true, allow_private_sources: ['127.0.0.1/32'] });
    const source = await call('POST', '/api/v1/dns/blocklists', { name: 'mirror', category: 'custom', url: `${base}/body`, format: 'domains' });
    const list = 'ads-a.example\nads-b.example\nads-c.example\n';
    plan = { total: list.length, line: list };
    // Turning blocklisting on refreshes the enabled sources: only this one (the seeded ones are off).
    const turnedOn = await call('PUT', '/api/v1/dns/blocklists/enabled', { enabled: true });
    assert.deepEqual(turnedOn.refreshed.map((o: { source_id: string; ok: boolean }) => [o.source_id, o.ok]), [[source.id, true]]);
    const good = await call('POST', `/api/v1/dns/blocklists/${source.id}/refresh`);
    assert.equal(good.ok, true, good.error);
    assert.equal(good.rule_count, 3);

    plan = { total: 80 * MiB, line: 'tracker.example\n' };
    const refused = await call('POST', `/api/v1/dns/blocklists/${source.id}/refresh`);
    assert.equal(refused.ok, false);
    assert.match(refused.error, /refused: more than the 50 MiB allowed \(the transfer was stopped, nothing was kept\)/);
    assert.equal((await lastServed()).finished, false, 'the transfer ran to its end');
    const record = await call('GET', `/api/v1/dns/blocklists/${source.id}`);
    assert.equal(record.rule_count, 3, 'the last good copy is still the one in force');
    assert.equal(record.last_sha256, good.sha256);
    assert.match(record.last_error, /refused: more than the 50 MiB allowed/);
  } finally {
    await t.close();
  }
});
