import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from 'typebox';
import type { Area } from '../src/areas/area.js';
import { startTestApp, json, type TestApp } from './helpers/app.js';

const probe: Area = {
  name: 'probe',
  routes: [
    {
      method: 'POST', path: '/api/v1/test/echo', access: 'public', summary: 'echo', tags: ['test'],
      schema: { body: Type.Object({ name: Type.String(), port: Type.Integer({ minimum: 1, maximum: 65535 }) }, { additionalProperties: false }) },
      handler: (request) => request.body,
    },
    {
      method: 'GET', path: '/api/v1/test/crash', access: 'public', summary: 'crash', tags: ['test'],
      handler: () => {
        throw new Error('secret internal detail at /srv/db.ts:42');
      },
    },
  ],
};

let t: TestApp;
before(async () => {
  t = await startTestApp({ areas: () => [probe] });
});
after(() => t.close());

const echo = (payload: string, contentType = 'application/json') =>
  t.app.inject({ method: 'POST', url: '/api/v1/test/echo', payload, headers: { 'content-type': contentType } });

test('every client mistake is 400 with exactly one key, error, naming the problem', async () => {
  const cases: [string, string, RegExp][] = [
    ['{"name": "x", ', 'application/json', /not valid JSON/],
    ['name=x', 'application/x-www-form-urlencoded', /content type/],
    ['hello', 'text/plain', /content type/],
    ['{"port": 1}', 'application/json', /body\.name is required/],
    ['{"name": "x", "port": "80"}', 'application/json', /body\.port must be integer/],
    ['{"name": "x", "port": 70000}', 'application/json', /body\.port must be <= 65535/],
    ['', 'application/json', /empty|JSON|body must be object/i],
  ];
  for (const [payload, contentType, message] of cases) {
    const response = await echo(payload, contentType);
    assert.equal(response.statusCode, 400, `${contentType} ${payload}`);
    const body = json(response);
    assert.deepEqual(Object.keys(body), ['error']);
    assert.match(body.error, message);
  }
});

test('valid bodies pass through', async () => {
  const response = await echo('{"name": "x", "port": 80}');
  assert.equal(response.statusCode, 200);
  assert.deepEqual(json(response), { name: 'x', port: 80 });
});

test('unknown routes are 404, known paths with the wrong method 405 with Allow', async () => {
  const missing = await t.app.inject({ url: '/api/v1/nothing-here' });
  assert.equal(missing.statusCode, 404);
  assert.deepEqual(Object.keys(json(missing)), ['error']);
  const wrong = await t.app.inject({ method: 'DELETE', url: '/api/v1/test/echo' });
  assert.equal(wrong.statusCode, 405);
  assert.equal(wrong.headers.allow, 'POST');
  assert.deepEqual(Object.keys(json(wrong)), ['error']);
});

test('an unhandled error is 500 with no stack trace or internal detail', async () => {
  const response = await t.app.inject({ url: '/api/v1/test/crash' });
  assert.equal(response.statusCode, 500);
  assert.deepEqual(json(response), { error: 'internal error' });
  assert.ok(!response.body.includes('/srv/db.ts'));
});

test('every response carries a request id; a safe client-supplied one is kept', async () => {
  const response = await t.app.inject({ url: '/api/v1/nothing-here', headers: { 'x-request-id': 'abc-123' } });
  assert.equal(response.headers['x-request-id'], 'abc-123');
  const unsafe = await t.app.inject({ url: '/api/v1/nothing-here', headers: { 'x-request-id': 'bad\nid' } });
  assert.notEqual(unsafe.headers['x-request-id'], 'bad\nid');
});

test('OpenAPI document is generated from the route schemas and Swagger UI is served', async () => {
  const response = await t.app.inject({ url: '/api/v1/openapi.json' });
  assert.equal(response.statusCode, 200);
  const document = json(response);
  assert.equal(document.openapi, '3.1.0');
  assert.ok(document.paths['/api/v1/test/echo'].post.requestBody);
  const docs = await t.app.inject({ url: '/api/docs/' });
  assert.equal(docs.statusCode, 200);
});
