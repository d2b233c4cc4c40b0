import { test } from 'node:test';
import assert from 'node:assert/strict';
import { json } from './helpers/app.js';
import { startAreaApp } from './helpers/area-app.js';
import { adminHeaders } from './helpers/auth.js';
import { OperationDriver, type OpenApiDocument } from './helpers/openapi-driver.js';

const ANY_ID = '00000000-0000-4000-8000-000000000000';
/** Path parameters filled with values their patterns accept, so only the body can be at fault. */
const fill = (path: string) => path.replace(/:(name|section)\b/g, 'probe0').replace(/:[A-Za-z_]+/g, ANY_ID);

test('every route that takes a body answers a malformed one (null, empty, array, number, string) with 400 {error: "body…"}, never 5xx', async () => {
  const t = await startAreaApp();
  try {
    const admin = t.headers;
    const headers = { ...admin, 'content-type': 'application/json' };
    const failures: string[] = [];
    let probed = 0;
    for (const route of t.app.catalogue) {
      if (!['POST', 'PUT', 'PATCH'].includes(route.method)) continue;
      const url = fill(route.path);
      // A JSON null reaches no handler on any route.
      // An array body (PUT /notify/events) takes `[]`: the empty list.
      const bodies = route.hasBody ? ['null', '', ...(route.arrayBody ? [] : ['[]']), '42', '"text"'] : ['null', ''];
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

/** A JSON object nested this deep: far deeper than any body the API takes, deep enough to overflow a recursive walker. */
const DEEP = 20_000;
const deepJson = '{"a":'.repeat(DEEP) + '1' + '}'.repeat(DEEP);
/** Optional-body POSTs that must still refuse no body: an import of nothing is a mistake (issue 31 item 8). */
const IMPORTS = ['/api/v1/config/import', '/api/v1/config/import-preview', '/api/v1/multiwan/apply-yaml'];

test('every PUT/POST/PATCH answers no body (with or without a Content-Type) and JSON nested 20,000 deep with 400 {error: "body…"}, never 5xx', async () => {
  const t = await startAreaApp();
  try {
    let admin = t.headers;
    const document = json<OpenApiDocument>(await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' }));
    // Path parameters name objects that exist, so a handler (not a 404) meets the body.
    const driver = new OperationDriver(t.app, document, () => admin);
    const shapes = [
      { name: 'no body, no content type', contentType: undefined, payload: undefined },
      { name: 'empty body, no content type', contentType: undefined, payload: '' },
      { name: 'empty body, application/json', contentType: 'application/json', payload: '' },
      { name: `JSON nested ${DEEP} deep`, contentType: 'application/json', payload: deepJson },
    ];
    const failures: string[] = [];
    const answered = new Map<string, number>();
    let probed = 0;
    for (const route of t.app.catalogue) {
      if (!['POST', 'PUT', 'PATCH'].includes(route.method)) continue;
      const url = await driver.urlOf(route.method, route.path);
      // A POST whose fields are all optional (an action with options) runs without a body as if sent `{}`;
      // every other body is required. The document says which (requestBody.required).
      const bodyOptional = route.hasBody && driver.operation(route.method, route.path)?.requestBody?.required === false;
      for (const shape of shapes) {
        const noBody = !shape.payload;
        if (noBody && shape.contentType === undefined && !route.hasBody) continue; // nothing to send, nothing missing
        if (noBody && shape.contentType === undefined && bodyOptional && !IMPORTS.includes(route.path)) {
          if (route.path === '/api/v1/auth/logout') continue; // it would end the session the walk runs in
          const response = await t.app.inject({ method: route.method as 'POST', url, headers: admin, payload: shape.payload });
          probed++;
          if (response.statusCode >= 500) failures.push(`${route.method} ${route.path} (${shape.name}, optional body): ${response.statusCode} ${response.body.slice(0, 100)}`);
          continue;
        }
        const headers = shape.contentType ? { ...admin, 'content-type': shape.contentType } : admin;
        const response = await t.app.inject({ method: route.method as 'POST', url, headers, payload: shape.payload });
        probed++;
        answered.set(shape.name, (answered.get(shape.name) ?? 0) + 1);
        const error = response.headers['content-type']?.toString().includes('json') ? json(response).error : undefined;
        if (response.statusCode !== 400 || typeof error !== 'string' || !/^body/.test(error)) {
          failures.push(`${route.method} ${route.path} (${shape.name}): ${response.statusCode} ${response.body.slice(0, 100)}`);
        }
      }
      // A route that changes the caller's own account (password, TOTP) may end its session: sign in again.
      if ((await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: admin })).statusCode === 401) admin = await adminHeaders(t.app);
    }
    assert.ok(probed > 600, `probed ${probed} requests`);
    assert.ok((answered.get('no body, no content type') ?? 0) > 150, `no-body requests that must be refused: ${answered.get('no body, no content type')}`);
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
  const t = await startAreaApp();
  try {
    const admin = t.headers;
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
