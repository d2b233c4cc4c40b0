import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { toSpecPath } from '../src/http/route.js';
import { startTestApp } from './helpers/app.js';
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
    const bySection = new Map<string, number>();
    for (const op of missing) bySection.set(op.section, (bySection.get(op.section) ?? 0) + 1);
    for (const [section, count] of bySection) t.diagnostic(`missing in ${section}: ${count}`);
  } finally {
    await app.close();
  }
});
