import { test } from 'node:test';
import assert from 'node:assert/strict';
import { json } from './helpers/app.js';
import { adminApi } from './helpers/admin-api.js';
import { startAreaApp } from './helpers/area-app.js';

/**
 * Re-applying an unchanged configuration rewrites only the applied time; a change rewrites only the rows of the
 * objects that changed (one row per applied object); what is recorded must stay exactly what runs, also across a
 * restart.
 */
const api = adminApi();

const call = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => api.t.app.inject({ method, url, headers: api.headers, ...(payload ? { payload } : {}) });
const appliedRow = () => api.t.app.context.db.prepare('SELECT applied_at, snapshot, ruleset FROM pf_applied WHERE id = 1').get() as { applied_at: string; snapshot: string; ruleset: string };
const appliedObject = (id: string) => api.t.app.context.db.prepare("SELECT data FROM pf_applied_objects WHERE kind = 'rule' AND id = ?").get(id) as { data: string } | undefined;

test('reloading an unchanged configuration moves the applied time; a change after it is recorded in full', async () => {
  const created = await call('POST', '/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: 22 });
  assert.equal(created.statusCode, 201, created.body);
  const rule = json(created);
  assert.equal((await call('POST', '/api/v1/reload')).statusCode, 200);
  const first = appliedRow();

  api.t.clock.advance(60_000);
  const again = await call('POST', '/api/v1/reload');
  assert.equal(again.statusCode, 200, again.body);
  const second = appliedRow();
  assert.equal(second.applied_at, json(again).applied_at);
  assert.notEqual(second.applied_at, first.applied_at);
  assert.equal(second.snapshot, first.snapshot);
  assert.equal(second.ruleset, first.ruleset);
  assert.equal(json(await call('GET', '/api/v1/pending')).applied_at, second.applied_at);

  assert.equal((await call('PUT', `/api/v1/rules/${rule.id}`, { dst_port_start: 2222 })).statusCode, 200);
  assert.equal(json(await call('GET', '/api/v1/pending')).firewall, true);
  assert.equal((await call('POST', '/api/v1/reload')).statusCode, 200);
  const third = appliedRow();
  assert.notEqual(third.ruleset, second.ruleset);
  assert.match(appliedObject(rule.id)?.data ?? '', /"start":2222/);
  assert.equal(json(await call('GET', '/api/v1/pending')).firewall, false);

  const restarted = await startAreaApp({ dataDir: api.t.dataDir });
  try {
    const pending = json(await restarted.request('GET', '/api/v1/pending'));
    assert.equal(pending.firewall, false, 'after a restart the recorded snapshot is what runs');
    assert.equal(pending.applied_at, third.applied_at);
  } finally {
    await restarted.close();
  }
});
