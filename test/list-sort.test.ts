import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { json } from './helpers/app.js';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';
import type { Headers } from './helpers/auth.js';

/** Lists sort by the fields the OpenAPI document lists for them, and by nothing else. */
let t: AreaApp;
let headers: Headers;
let document: any;
before(async () => {
  t = await startAreaApp();
  headers = t.headers;
  document = json(await t.app.inject({ url: '/api/v1/openapi.json' }));
});
after(() => t.close());

const get = (url: string) => t.app.inject({ method: 'GET', url, headers });
const sortParameter = (path: string) => {
  const parameters = document.paths[path].get.parameters as { name: string; in: string; schema: { enum?: string[] } }[];
  return parameters.find((p) => p.name === 'sort' && p.in === 'query')!.schema;
};

test('the OpenAPI document lists each list\'s sortable fields as an enum, ascending and -descending', () => {
  const aliases = sortParameter('/api/v1/aliases').enum!;
  for (const field of ['name', '-name', 'alias_type', '-alias_type', 'enabled', 'id', '-id', 'created_at', '-updated_at']) assert.ok(aliases.includes(field), field);
  assert.ok(!aliases.includes('entries'), 'an array is not sortable');
  assert.ok(!aliases.includes('priority'), 'another list\'s field');
  const rules = sortParameter('/api/v1/rules').enum!;
  for (const field of ['priority', '-priority', 'action', 'protocol', '-created_at']) assert.ok(rules.includes(field), field);
  assert.ok(!rules.includes('rule_match'), 'an object is not sortable');
  assert.ok(!rules.includes('name'));
  assert.equal(new Set(rules).size, rules.length, 'no field listed twice');
});

test('an unknown sort field is a 400 naming it; a listed one sorts', async () => {
  const unknown = await get('/api/v1/aliases?sort=colour');
  assert.equal(unknown.statusCode, 400);
  assert.match(json(unknown).error, /^querystring\.sort: "colour" is not one of: .*\bname\b.*-name/);
  const nested = await get('/api/v1/rules?sort=-rule_match');
  assert.equal(nested.statusCode, 400);
  assert.match(json(nested).error, /^querystring\.sort: "-rule_match" is not one of: /);

  for (const name of ['b-alias', 'c-alias', 'a-alias']) {
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/aliases', headers, payload: { name, alias_type: 'host', entries: ['192.0.2.1'] } });
    assert.equal(created.statusCode, 201, created.body);
  }
  const names = async (query: string) => json(await get(`/api/v1/aliases?${query}`)).map((a: { name: string }) => a.name).filter((n: string) => n.endsWith('-alias'));
  assert.deepEqual(await names('sort=name'), ['a-alias', 'b-alias', 'c-alias']);
  assert.deepEqual(await names('sort=-name'), ['c-alias', 'b-alias', 'a-alias']);
});
