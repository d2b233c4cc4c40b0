/**
 * The settings sections whose reads also show live figures (the managed logs' sizes, the state table's current
 * size) tag what a PUT changes, not the figures: a log that grew or a connection that opened between reading
 * and saving is not "someone else's change", so the console's save with If-Match goes through; a change to the
 * stored policy still answers 412.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { adminApi } from './helpers/admin-api.js';

const api = adminApi();
const { call } = api;

async function putIfMatch(url: string, tag: string, payload: unknown) {
  const response = await api.t.app.inject({ method: 'PUT', url, payload: payload as object, headers: { ...api.headers, 'if-match': tag } });
  return { status: response.statusCode, body: response.body };
}

test('log rotation: the tag names the policy; a log growing meanwhile does not refuse the save, a policy change does', async () => {
  const read = await call('GET', '/api/v1/settings/log-rotation');
  const tag = String(read.headers.etag);
  mkdirSync(join(api.t.dataDir, 'logs'), { recursive: true });
  appendFileSync(join(api.t.dataDir, 'logs', 'api.log'), 'a line the API wrote meanwhile\n'.repeat(100));
  const again = await call('GET', '/api/v1/settings/log-rotation');
  assert.notDeepEqual(again.body.logs, read.body.logs, 'the sizes shown changed');
  assert.equal(again.headers.etag, tag, 'the tag did not');
  const saved = await putIfMatch('/api/v1/settings/log-rotation', tag, { keep: 4 });
  assert.equal(saved.status, 200, saved.body);
  assert.equal((await putIfMatch('/api/v1/settings/log-rotation', tag, { keep: 5 })).status, 412, 'the policy changed since the tag was read');
});

test('packet filter tuning: the tag names the stored tuning; the state table filling meanwhile does not refuse the save', async () => {
  const filter = api.t.app.context.platform.packetFilter;
  const status = filter.status.bind(filter);
  const read = await call('GET', '/api/v1/settings/pf-tuning');
  const tag = String(read.headers.etag);
  filter.status = async () => ({ ...(await status()), states: read.body.current_states + 1234 });
  const again = await call('GET', '/api/v1/settings/pf-tuning');
  assert.equal(again.body.current_states, read.body.current_states + 1234, 'the current size shown changed');
  assert.equal(again.headers.etag, tag, 'the tag did not');
  const saved = await putIfMatch('/api/v1/settings/pf-tuning', tag, { max_states: 150000 });
  assert.equal(saved.status, 200, saved.body);
  assert.equal((await putIfMatch('/api/v1/settings/pf-tuning', tag, { max_states: 160000 })).status, 412, 'the tuning changed since the tag was read');
});
