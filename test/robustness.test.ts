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

type PropertySchema = { type?: string | string[]; anyOf?: PropertySchema[]; oneOf?: PropertySchema[] };

/** The JSON types a schema accepts (through unions too); empty when it accepts anything. */
function typesOf(schema: PropertySchema): Set<string> {
  const own = schema.type === undefined ? [] : [schema.type].flat();
  const branches = [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].flatMap((branch) => [...typesOf(branch)]);
  const types = new Set([...own, ...branches]);
  if (types.has('integer')) types.add('number');
  return types;
}

/** A value of a JSON type the schema refuses: an array for an object, an object for an array, else a number or text. */
function wrongValueFor(accepted: Set<string>): unknown {
  if (accepted.size === 0) return undefined; // a field of any type cannot be sent wrong
  if (accepted.has('object') && !accepted.has('array')) return ['not', 'an object'];
  if (accepted.has('array') && !accepted.has('object')) return { not: 'a list' };
  if (!accepted.has('number')) return 12345;
  if (!accepted.has('string')) return 'text';
  return accepted.has('boolean') ? undefined : true;
}

test('every body field sent with the wrong JSON type (an array for an object, text for a number, ...) answers 400 {error: "body…"}, never 5xx', async () => {
  const t = await startTestApp();
  try {
    const admin = await adminHeaders(t.app);
    const headers = { ...admin, 'content-type': 'application/json' };
    const document = json<{ paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { properties?: Record<string, PropertySchema> } }> } }>> }>(
      await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' }),
    );
    const failures: string[] = [];
    let probed = 0;
    for (const route of t.app.catalogue) {
      if (!route.hasBody) continue;
      const specPath = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      const properties = document.paths[specPath]?.[route.method.toLowerCase()]?.requestBody?.content['application/json']?.schema.properties ?? {};
      for (const [field, schema] of Object.entries(properties)) {
        const wrong = wrongValueFor(typesOf(schema));
        if (wrong === undefined) continue;
        const response = await t.app.inject({ method: route.method as 'POST', url: fill(route.path), headers, payload: JSON.stringify({ [field]: wrong }) });
        probed++;
        const error = response.headers['content-type']?.toString().includes('json') ? json(response).error : undefined;
        if (response.statusCode !== 400 || typeof error !== 'string' || !/^body/.test(error)) {
          failures.push(`${route.method} ${route.path} ${field}=${JSON.stringify(wrong)}: ${response.statusCode} ${response.body.slice(0, 100)}`);
        }
      }
    }
    assert.ok(probed > 500, `probed ${probed} fields`);
    assert.deepEqual(failures, []);
  } finally {
    await t.close();
  }
});
