/**
 * The appliance release feed names the staged tarball through its version; a tag such as `v99.1.0/../../../evil`
 * must not choose another path in the data directory (issue 11: no path from a configured source into the host).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { json } from '../helpers/app.js';
import { startAreaApp } from '../helpers/area-app.js';

test('a release tag with path separators is refused (400) and nothing is written outside appliance/releases', async () => {
  const t = await startAreaApp();
  const tarball = gzipSync(Buffer.from('payload'));
  const digest = createHash('sha256').update(tarball).digest('hex');
  const server: Server = createServer((request, response) => {
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    if (request.url === '/latest') {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({
        tag_name: 'v99.1.0/../../../evil', body: '', published_at: '2026-11-01T00:00:00Z',
        assets: [{ name: 'bulwark-99.1.0.tar.gz', browser_download_url: `${base}/t.tar.gz` }, { name: 'bulwark-99.1.0.tar.gz.sha256', browser_download_url: `${base}/t.sha256` }],
      }));
    } else if (request.url === '/t.tar.gz') response.end(tarball);
    else if (request.url === '/t.sha256') response.end(`${digest}  bulwark-99.1.0.tar.gz\n`);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as { port: number };
    await t.request('PUT', '/api/v1/settings/appliance_updates', { release_url: `http://127.0.0.1:${port}/latest`, allow_http: true, allow_private: '127.0.0.1/32' });
    assert.equal(json(await t.request('POST', '/api/v1/updates/appliance/check')).update_available, true);
    const installed = await t.request('POST', '/api/v1/updates/appliance/install');
    assert.equal(installed.statusCode, 400, installed.body);
    assert.match(json(installed).error, /version/);
    assert.equal(existsSync(join(t.dataDir, 'evil.tar')), false);
    assert.deepEqual(readdirSync(t.dataDir).filter((name) => name.endsWith('.tar')), []);
  } finally {
    server.close();
    await t.close();
  }
});
