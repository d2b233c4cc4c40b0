import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { toSpecPath } from '../src/http/route.js';
import { API_EXTENSIONS, SERVED_FILE_PATHS } from '../src/http/extensions.js';
import { startTestApp } from './helpers/app.js';
import { startAreaApp } from './helpers/area-app.js';
import { sharedFile } from './helpers/shared.js';

const tsv = sharedFile('spec/endpoints.tsv');

/** Normalises parameter names so `{tid}` and `{id}` at the same position compare equal. */
const shape = (path: string) => path.replace(/\{[^}]+\}/g, '{}');

interface Operation {
  section: string;
  method: string;
  path: string;
  permission: string;
}

function readOperations(path: string): Operation[] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => {
      const [section, method, opPath, permission] = line.split('\t');
      return { section, method, path: opPath, permission };
    });
}

test('every registered route declares its access, and it matches endpoints.tsv', { skip: tsv.skip }, async (t) => {
  const operations = readOperations(tsv.path);
  const app = await startTestApp();
  try {
    const registered = new Map(app.app.catalogue.map((r) => [`${r.method} ${shape(toSpecPath(r.path))}`, r]));
    const undeclared = app.app.catalogue.filter((r) => r.access === undefined);
    assert.deepEqual(undeclared, [], 'routes without a declared access');

    const mismatched: string[] = [];
    const missing: Operation[] = [];
    for (const op of operations) {
      if (op.section === 'Live streams' && op.path.includes('/ws')) continue; // WebSocket upgrade, checked by the dashboard tests
      const route = registered.get(`${op.method} ${shape(op.path)}`);
      if (!route) missing.push(op);
      else if (route.access !== op.permission) mismatched.push(`${op.method} ${op.path}: table ${op.permission}, route ${route.access}`);
    }
    assert.deepEqual(mismatched, [], 'permission differs from endpoints.tsv');
    t.diagnostic(`${operations.length - missing.length} of ${operations.length} operations registered`);
    assert.deepEqual(missing.map((op) => `${op.method} ${op.path}`), [], 'operations of endpoints.tsv without a route');

    // Anything beyond the specification is an API extension listed with its permission, or a served file.
    const specified = new Set(operations.map((op) => `${op.method} ${shape(op.path)}`));
    const extensions = new Map(API_EXTENSIONS.map((e) => [`${e.method} ${shape(e.path)}`, e]));
    const unlisted: string[] = [];
    for (const route of app.app.catalogue) {
      const path = toSpecPath(route.path);
      const key = `${route.method} ${shape(path)}`;
      if (specified.has(key) || SERVED_FILE_PATHS.some((pattern) => pattern.test(path))) continue;
      const extension = extensions.get(key);
      if (!extension) unlisted.push(`${key} (${route.access})`);
      else if (extension.access !== route.access) unlisted.push(`${key}: table ${extension.access}, route ${route.access}`);
    }
    assert.deepEqual(unlisted, [], 'routes beyond endpoints.tsv that src/http/extensions.ts does not list');
    const unregistered = API_EXTENSIONS.filter((e) => !registered.has(`${e.method} ${shape(e.path)}`));
    assert.deepEqual(unregistered, [], 'listed extensions without a route');
  } finally {
    await app.close();
  }
});

test('conformance: every operation of endpoints.tsv answers an admin with something other than 404-no-route, 405 or 501', { skip: tsv.skip }, async () => {
  const operations = readOperations(tsv.path).filter((op) => !(op.section === 'Live streams' && op.path.includes('/ws')));
  const app = await startAreaApp();
  try {
    const { adminHeaders } = await import('./helpers/auth.js');
    const headers = app.headers;
    const failures: string[] = [];
    for (const op of operations) {
      // Read-only probes only for actions that would stop the test machine or wait on a stream.
      if (/\/(reboot|shutdown)$|\/stream$/.test(op.path)) continue;
      const url = op.path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
      const response = await app.app.inject({ method: op.method as 'GET', url, headers, payload: op.method === 'GET' || op.method === 'DELETE' ? undefined : {} });
      const noRoute = response.statusCode === 404 && /^no route /.test(JSON.parse(response.body || '{}').error ?? '');
      if (noRoute || response.statusCode === 405 || response.statusCode === 501) failures.push(`${op.method} ${op.path}: ${response.statusCode}`);
    }
    assert.deepEqual(failures, []);
  } finally {
    await app.close();
  }
});
