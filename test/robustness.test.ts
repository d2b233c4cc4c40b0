import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, json } from './helpers/app.js';
import { adminHeaders } from './helpers/auth.js';

const ANY_ID = '00000000-0000-4000-8000-000000000000';
/** Path parameters filled with values their patterns accept, so only the body can be at fault. */
const fill = (path: string) => path.replace(/:(name|section)\b/g, 'probe0').replace(/:[A-Za-z_]+/g, ANY_ID);

test('every route that takes a body answers a malformed one (null, empty, array, number, string) with 400 {error: "body…"}, never 5xx', async () => {
  const t = await startTestApp();
  try {
    const admin = await adminHeaders(t.app);
    const headers = { ...admin, 'content-type': 'application/json' };
    const failures: string[] = [];
    let probed = 0;
    for (const route of t.app.catalogue) {
      if (!['POST', 'PUT', 'PATCH'].includes(route.method)) continue;
      const url = fill(route.path);
      // A JSON null reaches no handler on any route.
      const bodies = route.hasBody ? ['null', '', '[]', '42', '"text"'] : ['null', ''];
      for (const payload of bodies) {
        const response = await t.app.inject({ method: route.method as 'POST', url, headers, payload });
        probed++;
        const error = response.headers['content-type']?.toString().includes('json') ? json(response).error : undefined;
        if (response.statusCode !== 400 || typeof error !== 'string' || !/^body/.test(error)) {
          failures.push(`${route.method} ${route.path} ${JSON.stringify(payload)}: ${response.statusCode} ${response.body.slice(0, 100)}`);
        }
      }
    }
    assert.ok(probed > 300, `probed ${probed} requests`);
    assert.deepEqual(failures, []);
  } finally {
    await t.close();
  }
});
