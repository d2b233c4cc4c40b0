import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PUT_TAKES_IF_MATCH, putTakesIfMatch } from '../web/src/api/conditional-writes.js';
import { startTestApp, json } from './helpers/app.js';

// The web console sends If-Match only to the PUTs listed in web/src/api/conditional-writes.ts: the others
// answer the header with a 400. Every entry must be a PUT whose OpenAPI entry takes If-Match (and answers 412).

interface Operation {
  parameters?: { in: string; name: string }[];
  responses?: Record<string, unknown>;
}

test('every PUT the console sends If-Match to takes it (OpenAPI: the if-match header and a 412 answer)', async () => {
  const t = await startTestApp();
  try {
    const doc = json<{ paths: Record<string, Record<string, Operation>> }>(await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' }));
    for (const template of PUT_TAKES_IF_MATCH) {
      const put = doc.paths[`/api/v1${template}`]?.put;
      assert.ok(put, `PUT ${template} exists`);
      assert.ok(put.parameters?.some((parameter) => parameter.in === 'header' && parameter.name === 'if-match'), `PUT ${template} takes If-Match`);
      assert.ok(put.responses?.['412'], `PUT ${template} documents its 412`);
    }
  } finally {
    await t.close();
  }
});

test('a concrete path matches its template segment by segment; a generic section path does not borrow a named one', () => {
  assert.equal(putTakesIfMatch('/aliases/5f0c9a52-7d1e-4c37-9a55-1f4f3c2b9e10'), true);
  assert.equal(putTakesIfMatch('/settings/syslog'), true);
  assert.equal(putTakesIfMatch('/vpn/wg/5f0c9a52-7d1e-4c37-9a55-1f4f3c2b9e10'), false, 'the tunnel PUT keeps no tag');
  assert.equal(putTakesIfMatch('/settings/pf-tuning'), false);
  assert.equal(putTakesIfMatch('/aliases/a/b'), false, 'one segment per placeholder');
  assert.equal(putTakesIfMatch('/aliases'), false);
});
