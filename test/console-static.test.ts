import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { startTestApp, json, type TestApp } from './helpers/app.js';

const INDEX = '<!doctype html><title>Bulwark</title><script type="module" src="/assets/app-abc123.js"></script>';
const SCRIPT = 'console.log("bulwark console");'.repeat(20);

/** A stand-in for a built console: index.html, one hashed script and its gzip sibling. */
function fakeConsoleBuild(): string {
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-console-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), INDEX);
  writeFileSync(join(dir, 'assets', 'app-abc123.js'), SCRIPT);
  writeFileSync(join(dir, 'assets', 'app-abc123.js.gz'), gzipSync(SCRIPT));
  return dir;
}

async function withConsole(run: (t: TestApp, dir: string) => Promise<void>, consoleDir = fakeConsoleBuild()): Promise<void> {
  const t = await startTestApp({ consoleDir });
  try {
    await run(t, consoleDir);
  } finally {
    await t.close();
    rmSync(consoleDir, { recursive: true, force: true });
  }
}

test('the console is served at / and at every path outside /api/, with the security headers of an appliance page', async () => {
  await withConsole(async ({ app }) => {
    for (const url of ['/', '/login', '/login?oauth_error=state', '/rules', '/vpn/peers/deep/link']) {
      const response = await app.inject({ method: 'GET', url });
      assert.equal(response.statusCode, 200, url);
      assert.match(String(response.headers['content-type']), /^text\/html/, url);
      assert.equal(response.body, INDEX, url);
      assert.equal(response.headers['cache-control'], 'no-cache', `${url}: index.html names the current bundle`);
      const csp = String(response.headers['content-security-policy']);
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /script-src 'self'(;|$)/, 'no inline script, no eval');
      assert.match(csp, /frame-ancestors 'none'/);
      assert.equal(response.headers['x-frame-options'], 'DENY');
      assert.equal(response.headers['x-content-type-options'], 'nosniff');
    }
    const head = await app.inject({ method: 'HEAD', url: '/dashboard' });
    assert.equal(head.statusCode, 200);
  });
});

test('hashed assets are cached for good and served pre-compressed when the browser takes gzip', async () => {
  await withConsole(async ({ app }) => {
    const plain = await app.inject({ method: 'GET', url: '/assets/app-abc123.js' });
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.body, SCRIPT);
    assert.match(String(plain.headers['content-type']), /javascript/);
    assert.match(String(plain.headers['cache-control']), /immutable/);
    assert.match(String(plain.headers['cache-control']), /max-age=31536000/);

    const gzipped = await app.inject({ method: 'GET', url: '/assets/app-abc123.js', headers: { 'accept-encoding': 'gzip' } });
    assert.equal(gzipped.statusCode, 200);
    assert.equal(gzipped.headers['content-encoding'], 'gzip');
    assert.match(String(gzipped.headers.vary), /accept-encoding/i);
    assert.equal(gunzipSync(gzipped.rawPayload).toString(), SCRIPT);
  });
});

test('unknown assets, /api/ paths and other methods keep the API answers (JSON 404, 405 with Allow)', async () => {
  await withConsole(async ({ app }) => {
    const missingAsset = await app.inject({ method: 'GET', url: '/assets/nothing-here.js' });
    assert.equal(missingAsset.statusCode, 404);
    assert.equal((await app.inject({ method: 'POST', url: '/assets/app-abc123.js', payload: {} })).statusCode, 404);
    assert.equal(typeof json(missingAsset).error, 'string');

    for (const url of ['/api/v1/no-such-thing', '/api/nothing', '/api']) {
      const response = await app.inject({ method: 'GET', url });
      assert.equal(response.statusCode, 404, url);
      assert.match(json(response).error, /^no route GET /, url);
    }
    const post = await app.inject({ method: 'POST', url: '/api/v1/no-such-thing', payload: {} });
    assert.equal(post.statusCode, 404, 'the fallback must not turn unknown API paths into 405');

    const wrongMethod = await app.inject({ method: 'PATCH', url: '/api/v1/rules' });
    assert.equal(wrongMethod.statusCode, 405);
    assert.match(String(wrongMethod.headers.allow), /GET/);

    const postPage = await app.inject({ method: 'POST', url: '/login', payload: {} });
    assert.equal(postPage.statusCode, 404);
    assert.equal(typeof json(postPage).error, 'string');
  });
});

test('nothing outside the console directory is reachable through /assets/', async () => {
  await withConsole(async ({ app }, dir) => {
    writeFileSync(join(dir, 'secret.txt'), 'do not serve');
    writeFileSync(join(dir, 'assets', '.hidden'), 'dotfile');
    for (const url of ['/assets/../secret.txt', '/assets/%2e%2e/secret.txt', '/assets/..%2fsecret.txt', '/assets/.hidden', '/assets/%2e%2e/%2e%2e/package.json']) {
      const response = await app.inject({ method: 'GET', url });
      assert.ok(!response.body.includes('do not serve') && !response.body.includes('dotfile') && !response.body.includes('"name"'), url);
      // a path the URL parser normalises out of /assets/ lands on the page itself; anything else is refused
      if (response.statusCode === 200) assert.equal(response.body, INDEX, url);
      else assert.equal(typeof json(response).error, 'string', `${url}: ${response.statusCode}`);
    }
  });
});

test('without a build, / says so (503) and the API is unaffected', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'bulwark-console-empty-'));
  await withConsole(async ({ app }) => {
    const page = await app.inject({ method: 'GET', url: '/' });
    assert.equal(page.statusCode, 503);
    assert.match(json(page).error, /not built/);
    const api = await app.inject({ method: 'GET', url: '/api/v1/auth/oauth/login-options' });
    assert.equal(api.statusCode, 200);
  }, empty);
});

test('the console routes are declared public in the route catalogue', async () => {
  await withConsole(async ({ app }) => {
    const consoleRoutes = app.catalogue.filter((route) => route.path === '/*' || route.path.startsWith('/assets/'));
    assert.deepEqual(consoleRoutes.map((route) => `${route.method} ${route.path} ${route.access}`).sort(), ['GET /* public', 'GET /assets/* public']);
  });
});
