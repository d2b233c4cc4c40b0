/**
 * The findings provider of plugins (docs/plugins.md): a running plugin, with its own key, puts findings about rules
 * into GET /rules/analysis, marked with it as their source; bad findings are 400 naming the field, any other key is
 * 403, and disabling the plugin removes them.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { json } from './helpers/app.js';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';
import { systemSkip } from './helpers/system-skip.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'plugins', 'findings-probe');
const NAME = 'findings-probe';
let t: AreaApp;
before(async () => {
  t = await startAreaApp();
  cpSync(FIXTURE, join(t.dataDir, 'plugins', NAME), { recursive: true });
});
after(() => t.close());

const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) => {
  const response = await t.request(method, url, payload);
  return { status: response.statusCode, body: response.body ? json(response) : undefined };
};

/** Polls the plugin's log (oldest first) until a line after the first `after` ones matches (deadline 30 s). */
async function waitForLine(pattern: RegExp, after = 0): Promise<string> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const lines = ((await call('GET', `/api/v1/plugins/${NAME}/logs?lines=500`)).body.entries as string[]).reverse();
    const found = lines.slice(after).find((line) => pattern.test(line));
    if (found) return found;
    if (Date.now() > deadline) assert.fail(`no plugin log line matched ${pattern}; log:\n${lines.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
const logLength = async () => ((await call('GET', `/api/v1/plugins/${NAME}/logs?lines=500`)).body.entries as string[]).length;

/** Sets the plugin's `findings` setting (it sends them) and returns the answer the plugin got. */
async function provide(findings: unknown[]): Promise<{ status: number; body: any }> {
  const seen = await logLength();
  assert.equal((await call('PUT', `/api/v1/plugins/${NAME}/config`, { settings: { findings } })).status, 200);
  const line = await waitForLine(/output: provided \d+ /, seen);
  const [, status, body] = /output: provided (\d+) (.*)$/.exec(line)!;
  return { status: Number(status), body: JSON.parse(body) };
}

test('a plugin adds findings to /rules/analysis with its own key: validated, marked with it, removed when it is disabled', { skip: systemSkip('running a plugin as nobody', { root: true, users: ['nobody'] }), timeout: 120_000 }, async () => {
  const rule = await call('POST', '/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: 8080, label: 'findings' });
  assert.equal(rule.status, 201, JSON.stringify(rule.body));
  assert.equal((await call('POST', '/api/v1/plugins/toggle', { name: NAME })).status, 200);
  await waitForLine(/output: provided 200 /);

  // Text is plain text: markup is kept as characters, never interpreted.
  const detail = '<b>seen</b> 0 hits in 90 days & "unused"';
  const accepted = await provide([{ rule_id: rule.body.id, severity: 'warning', detail }]);
  assert.deepEqual(accepted, { status: 200, body: { name: NAME, findings: 1 } });
  const analysis = await call('GET', '/api/v1/rules/analysis');
  assert.equal(analysis.status, 200);
  assert.deepEqual(analysis.body.plugin_findings, [{ source: NAME, rule_id: rule.body.id, severity: 'warning', detail }]);

  // Bad findings: 400 naming the field; what was provided before stays.
  const unknownRule = await provide([{ rule_id: 'no-such-rule', severity: 'info', detail: 'x' }]);
  assert.equal(unknownRule.status, 400);
  assert.match(unknownRule.body.error, /body\.findings\.0\.rule_id/);
  const badSeverity = await provide([{ rule_id: rule.body.id, severity: 'apocalyptic', detail: 'x' }]);
  assert.equal(badSeverity.status, 400);
  assert.match(badSeverity.body.error, /body\.findings\.0\.severity/);
  const tooLong = await provide([{ rule_id: rule.body.id, severity: 'info', detail: 'x'.repeat(501) }]);
  assert.equal(tooLong.status, 400);
  assert.match(tooLong.body.error, /body\.findings\.0\.detail/);
  const control = await provide([{ rule_id: rule.body.id, severity: 'info', detail: 'line\u001b[31m' }]);
  assert.equal(control.status, 400);
  assert.match(control.body.error, /body\.findings\.0\.detail/);
  assert.equal((await call('GET', '/api/v1/rules/analysis')).body.plugin_findings.length, 1);

  // Any other key, even an administrator's, is refused.
  const byAdmin = await call('PUT', `/api/v1/plugins/${NAME}/provided/findings`, { findings: [] });
  assert.equal(byAdmin.status, 403, JSON.stringify(byAdmin.body));

  // Disabling the plugin removes its findings.
  assert.equal((await call('POST', '/api/v1/plugins/toggle', { name: NAME, enabled: false })).status, 200);
  assert.deepEqual((await call('GET', '/api/v1/rules/analysis')).body.plugin_findings, []);
});
