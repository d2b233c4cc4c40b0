import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { json } from './helpers/app.js';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';
import { adminHeaders, type Headers } from './helpers/auth.js';
import { lifecycleAreas, newProbe, type ApplierProbe } from './helpers/config-area.js';
import type { HubEvent } from '../src/core/event-hub.js';
import { configOf } from './helpers/areas.js';

let t: AreaApp;
let admin: Headers;
let probe: ApplierProbe;
const events: HubEvent[] = [];

before(async () => {
  probe = newProbe();
  t = await startAreaApp({ areas: lifecycleAreas(probe) });
  admin = t.headers;
  t.app.context.events.on('*', (event) => events.push(event));
});
after(() => t.close());

const call = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
  t.app.inject({ method, url, headers: admin, ...(payload !== undefined ? { payload: payload as object } : {}) });
const ok = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, status = 200) => {
  const response = await call(method, url, payload);
  assert.equal(response.statusCode, status, `${method} ${url}: ${response.body}`);
  return response.statusCode === 204 ? undefined : json(response);
};
const apply = (comment?: string) => t.app.context.apply.applyAll('admin', comment ?? null);

test('every apply records a version with number, time, actor, comment and content hash; history pages with X-Total-Count', async () => {
  await ok('POST', '/api/v1/test/groups', { name: 'servers' }, 201);
  await ok('POST', '/api/v1/test/hosts', { name: 'alpha', group: 'servers', password: 'alpha-secret-1' }, 201);
  const first = await apply('first apply');
  assert.equal(first.version!.applied, true);
  assert.equal(first.version!.created_by, 'admin');
  assert.equal(first.version!.comment, 'first apply');
  assert.match(first.version!.hash, /^[0-9a-f]{64}$/);
  assert.deepEqual(probe.runs.at(-1)!.hosts, ['alpha']);
  assert.ok(events.some((e) => e.topic === 'config.applied' && e.payload.version === first.version!.version));

  const active = await ok('GET', '/api/v1/config/version');
  assert.equal(active.version, first.version!.version);
  assert.equal(active.pending, false);
  assert.equal(active.hash, active.current_hash);

  await ok('POST', '/api/v1/test/hosts', { name: 'beta', port: 2222 }, 201);
  assert.equal((await ok('GET', '/api/v1/config/version')).pending, true, 'a write after the apply is pending');
  const saved = await ok('POST', '/api/v1/config/save', { comment: 'manual save' });
  assert.match(saved.message, /saved as version \d+/);
  assert.equal(saved.applied, false);
  assert.equal(saved.created_by, 'admin');

  const history = await call('GET', '/api/v1/config/history?limit=1&offset=0');
  assert.equal(history.statusCode, 200);
  assert.equal(history.headers['x-total-count'], '2');
  const [newest] = json(history);
  assert.equal(newest.version, saved.version);
  assert.equal(newest.comment, 'manual save');
  const second = json(await call('GET', '/api/v1/config/history?limit=1&offset=1'));
  assert.equal(second[0].version, first.version!.version);
  assert.equal(second[0].active, true);
  assert.equal((await call('GET', '/api/v1/config/history?limit=0')).statusCode, 400);
});

test('a stored version reads back with its objects, secrets redacted', async () => {
  const history = json(await call('GET', '/api/v1/config/history'));
  const detail = await ok('GET', `/api/v1/config/version?version=${history[0].version}`);
  const alpha = detail.objects.find((o: { data: { name?: string } }) => o.data.name === 'alpha');
  assert.equal(alpha.data.password, '**REDACTED**');
  assert.ok(!JSON.stringify(detail).includes('alpha-secret-1'));
  assert.ok(!JSON.stringify(detail).includes('sealed:v1:'));
  assert.equal((await call('GET', '/api/v1/config/version?version=99999')).statusCode, 404);
});

test('diff lists per kind added, removed and changed fields (secrets redacted) plus a unified text diff', async () => {
  const [saved, applied] = json(await call('GET', '/api/v1/config/history'));
  const alpha = t.app.context.store.list('test_host').find((o) => o.data.name === 'alpha')!;
  await ok('PUT', `/api/v1/test/hosts/${alpha.id}`, { port: 2200, password: 'changed-secret-2' });
  const diff = await ok('GET', `/api/v1/config/diff?from=${applied.version}&to=current`);
  assert.equal(diff.identical, false);
  assert.equal(diff.from_version, applied.version);
  const hosts = diff.kinds.test_host;
  assert.deepEqual(hosts.added.map((o: { data: { name: string } }) => o.data.name), ['beta']);
  assert.deepEqual(hosts.removed, []);
  const change = hosts.changed.find((c: { id: string }) => c.id === alpha.id);
  assert.deepEqual(change.changes.find((c: { field: string }) => c.field === 'port'), { field: 'port', from: 22, to: 2200 });
  assert.deepEqual(change.changes.find((c: { field: string }) => c.field === 'password'), { field: 'password', from: '**REDACTED**', to: '**REDACTED**', secret: true });
  assert.match(diff.unified, /^--- version \d+\n\+\+\+ current\n/);
  assert.match(diff.unified, /^-  port = 22$/m);
  assert.match(diff.unified, /^\+  port = 2200$/m);
  assert.match(diff.unified, /^\+  name = "beta"$/m);
  assert.ok(!diff.unified.includes('changed-secret-2') && !diff.unified.includes('sealed:v1:'));
  // equal versions are identical; a bad reference is a 400, an unknown version a 404
  assert.equal((await ok('GET', `/api/v1/config/diff?from=${saved.version}&to=${saved.version}`)).identical, true);
  assert.equal((await call('GET', '/api/v1/config/diff?from=x')).statusCode, 400);
  assert.equal((await call('GET', '/api/v1/config/diff?from=424242')).statusCode, 404);
  // re-sealing the same secret is not a change
  await ok('PUT', `/api/v1/test/hosts/${alpha.id}`, { password: 'changed-secret-2' });
  const again = await ok('GET', `/api/v1/config/diff?from=current&to=current`);
  assert.equal(again.identical, true);
});

test('check re-validates every stored object and runs the appliers\' compile checks, and says what it checked', async () => {
  const clean = await ok('GET', '/api/v1/config/check');
  assert.equal(clean.valid, true, JSON.stringify(clean.errors));
  assert.deepEqual(clean.checked.appliers, [{ name: 'test-applier', compiled: true, errors: 0, warnings: 0 }]);
  const hostKind = clean.checked.kinds.find((k: { kind: string }) => k.kind === 'test_host');
  assert.equal(hostKind.schema, 'collection');
  assert.ok(hostKind.references_checked >= 1);
  assert.ok(clean.info.some((line: string) => /test applier rendered/.test(line)));

  // objects written around the collections (as a buggy migration might) are caught
  const store = t.app.context.store;
  const bad = store.insert('test_host', { name: 'broken', port: 70000, group: 'nowhere' });
  const stray = store.insert('unknown_kind', { anything: true });
  probe.checkErrors.push('nft -c: syntax error in line 3');
  try {
    const report = await ok('GET', '/api/v1/config/check');
    assert.equal(report.valid, false);
    assert.ok(report.errors.some((e: string) => e.includes(bad.id) && /port must be <= 65535/.test(e)), JSON.stringify(report.errors));
    assert.ok(report.errors.some((e: string) => e === 'test-applier: nft -c: syntax error in line 3'));
    assert.ok(report.warnings.some((w: string) => /unknown_kind: 1 object\(s\) not schema-checked/.test(w)));
    store.update('test_host', bad.id, { name: 'broken', port: 80, group: 'nowhere' });
    const refs = await ok('GET', '/api/v1/config/check');
    assert.ok(refs.errors.some((e: string) => /group names test_group "nowhere", which does not exist/.test(e)), JSON.stringify(refs.errors));
  } finally {
    store.remove('test_host', bad.id);
    store.remove('unknown_kind', stray.id);
    probe.checkErrors.length = 0;
  }
});

test('restore-preview writes nothing; restore replaces the configuration and applies it; a failed apply puts the previous one back', async () => {
  const history = json(await call('GET', '/api/v1/config/history'));
  const target = history.find((v: { comment: string | null }) => v.comment === 'first apply');
  const before = t.app.context.store.snapshot();
  const preview = await ok('POST', '/api/v1/config/restore-preview', { version: target.version });
  assert.equal(preview.valid, true);
  assert.deepEqual(preview.diff.kinds.test_host.removed.map((o: { data: { name: string } }) => o.data.name), ['beta']);
  assert.deepEqual(t.app.context.store.snapshot(), before, 'preview wrote nothing');

  probe.failNext = true;
  const failed = await call('POST', '/api/v1/config/restore', { version: target.version });
  assert.equal(failed.statusCode, 409);
  assert.match(json(failed).error, /simulated daemon refused.*previous configuration was put back/);
  assert.deepEqual(t.app.context.store.snapshot().map((o) => [o.id, o.data]), before.map((o) => [o.id, o.data]));

  const runs = probe.runs.length;
  const restored = await ok('POST', '/api/v1/config/restore', { version: target.version });
  assert.equal(restored.restored_from, target.version);
  assert.equal(restored.source, 'restore');
  assert.equal(restored.active, true);
  assert.equal(restored.hash, target.hash, 'the restored content hashes like the version it came from');
  assert.equal(probe.runs.length, runs + 1);
  assert.deepEqual(probe.runs.at(-1)!.hosts, ['alpha']);
  const alpha = t.app.context.store.list('test_host')[0];
  assert.equal(t.app.context.models.get('test_host').secret(alpha, 'password'), 'alpha-secret-1', 'the secret of that version is back');
  assert.equal((await call('POST', '/api/v1/config/restore', { version: 999999 })).statusCode, 404);
  assert.equal((await call('POST', '/api/v1/config/restore', {})).statusCode, 400);
});

test('retention keeps at most N versions and/or N days, never the active version or the rollback target', async () => {
  for (let i = 0; i < 4; i++) {
    await ok('POST', '/api/v1/test/groups', { name: `g${i}` }, 201);
    await ok('POST', '/api/v1/config/save', { comment: `save ${i}` });
  }
  const activeVersion = (await ok('GET', '/api/v1/config/version')).version;
  const policy = await ok('PUT', '/api/v1/config/retention', { max_versions: 2 });
  assert.equal(policy.max_versions, 2);
  assert.ok(policy.pruned.length > 0);
  const remaining = json(await call('GET', '/api/v1/config/history')).map((v: { version: number }) => v.version);
  assert.equal(remaining.length, 3, `two newest plus the active one: ${remaining}`);
  assert.ok(remaining.includes(activeVersion));
  assert.deepEqual((await ok('GET', '/api/v1/config/retention')).protected_versions, [activeVersion]);

  await ok('PUT', '/api/v1/config/retention', { max_versions: null, max_days: 1 });
  t.clock.advance(2 * 86_400_000);
  admin = await adminHeaders(t.app); // the session expired with the two days
  await ok('POST', '/api/v1/config/save', { comment: 'after two days' });
  const aged = json(await call('GET', '/api/v1/config/history'));
  assert.deepEqual(aged.map((v: { version: number }) => v.version).sort(), [activeVersion, aged[0].version].sort());
  for (const bad of [{ max_versions: 0 }, { max_days: -1 }, { max_versions: 'ten' }, { keep: 3 }]) {
    const response = await call('PUT', '/api/v1/config/retention', bad);
    assert.equal(response.statusCode, 400, JSON.stringify(bad));
  }
  await ok('PUT', '/api/v1/config/retention', { max_versions: 200, max_days: null });
});

test('commit-confirm: one window at a time, confirm keeps the change, status counts down', async () => {
  const opened = await ok('POST', '/api/v1/config/commit-confirm', { timeout_seconds: 120, description: 'widen SSH' });
  assert.equal(opened.active, true);
  assert.equal(opened.seconds_remaining, 120);
  assert.match(opened.message, /confirm within 120 seconds/);
  assert.equal((await call('POST', '/api/v1/config/commit-confirm', { timeout_seconds: 60 })).statusCode, 409);
  t.clock.advance(50_000);
  const status = await ok('GET', '/api/v1/config/commit-confirm/status');
  assert.equal(status.seconds_remaining, 70);
  assert.equal(status.revert_pending, true);
  assert.equal(status.description, 'widen SSH');
  const confirmed = await ok('POST', '/api/v1/config/commit-confirm/confirm');
  assert.equal(confirmed.confirmed, true);
  const after = await ok('GET', '/api/v1/config/commit-confirm/status');
  assert.equal(after.active, false);
  assert.equal(after.last.outcome, 'confirmed');
  assert.equal((await call('POST', '/api/v1/config/commit-confirm/confirm')).statusCode, 409);
  assert.equal((await call('POST', '/api/v1/config/commit-confirm', { timeout_seconds: 5 })).statusCode, 400);
  assert.ok(events.some((e) => e.topic === 'config.commit_confirm' && e.payload.event === 'confirmed'));
});

test('commit-confirm timeout restores AND re-applies the rollback target, keeps the discarded state as a version, audits and announces it', async () => {
  const running = await ok('GET', '/api/v1/config/version');
  const target = running.version;
  await ok('POST', '/api/v1/config/commit-confirm', { timeout_seconds: 60 });
  // the risky change, made and applied inside the window
  await ok('POST', '/api/v1/test/hosts', { name: 'risky', port: 8022 }, 201);
  await apply('open the risky port');
  assert.ok(probe.runs.at(-1)!.hosts.includes('risky'));
  const runs = probe.runs.length;

  t.clock.advance(59_000);
  const { commitConfirm } = configOf(t.app);
  assert.equal(await commitConfirm.expireIfDue(), false, 'not before the deadline');
  t.clock.advance(1_000);
  assert.equal(await commitConfirm.expireIfDue(), true);

  assert.ok(!t.app.context.store.list('test_host').some((o) => o.data.name === 'risky'), 'the store is back at the target');
  assert.equal(probe.runs.length, runs + 1, 'the target was re-applied');
  assert.ok(!probe.runs.at(-1)!.hosts.includes('risky'));
  const status = await ok('GET', '/api/v1/config/commit-confirm/status');
  assert.equal(status.active, false);
  assert.equal(status.last.outcome, 'rolled_back');
  assert.equal(status.last.rollback_version, target);
  const version = await ok('GET', '/api/v1/config/version');
  assert.equal(version.version, status.last.new_version);
  assert.equal(version.hash, running.hash);
  assert.equal(version.created_by, 'commit-confirm');
  const discarded = await ok('GET', `/api/v1/config/version?version=${status.last.discarded_version}`);
  assert.equal(discarded.source, 'pre-rollback');
  assert.ok(discarded.objects.some((o: { data: { name?: string } }) => o.data.name === 'risky'), 'the discarded writes are kept in the history');
  const rolledAway = json(await call('GET', '/api/v1/config/history')).find((v: { comment: string | null }) => v.comment === 'open the risky port');
  assert.equal(rolledAway.rolled_back, true);
  const audit = t.app.context.db.prepare("SELECT action, outcome, actor FROM audit_log WHERE category = 'config' AND action = 'config.commit_confirm.rollback'").all();
  assert.deepEqual(audit, [{ action: 'config.commit_confirm.rollback', outcome: 'success', actor: 'commit-confirm' }]);
  assert.ok(events.some((e) => e.topic === 'config.commit_confirm' && e.payload.event === 'rolled_back' && e.payload.rollback_version === target));
  const late = await call('POST', '/api/v1/config/commit-confirm/confirm');
  assert.equal(late.statusCode, 409);
  assert.match(json(late).error, /rolled_back to version/);
});

test('the commit-confirm timer reads the injected clock', async () => {
  const { commitConfirm } = configOf(t.app);
  await ok('POST', '/api/v1/config/commit-confirm', { timeout_seconds: 30 });
  commitConfirm.startTimer(5);
  try {
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(commitConfirm.current() !== undefined, true, 'nothing happens while the clock stands still');
    const rolled = new Promise<HubEvent>((resolve) => {
      const off = t.app.context.events.on('config.commit_confirm', (event) => {
        if (event.payload.event === 'rolled_back') {
          off();
          resolve(event);
        }
      });
    });
    t.clock.advance(31_000);
    const keepAlive = setTimeout(() => undefined, 10_000); // the timer is unref'd: keep the loop alive while waiting
    const event = await rolled;
    clearTimeout(keepAlive);
    assert.equal(event.payload.outcome, 'rolled_back');
    assert.equal(commitConfirm.current(), undefined);
  } finally {
    commitConfirm.startTimer();
  }
});

test('a window that expired while the service was down is reverted at start-up; one still open survives the restart', async () => {
  const p = newProbe();
  const first = await startAreaApp({ areas: lifecycleAreas(p) });
  const dataDir = first.dataDir;
  const firstAdmin = first.headers;
  const inject = (app: AreaApp, headers: Headers, method: 'GET' | 'POST', url: string, payload?: object) => app.app.inject({ method, url, headers, payload });
  try {
    await inject(first, firstAdmin, 'POST', '/api/v1/test/hosts', { name: 'safe' });
    const good = await first.app.context.apply.applyAll('admin', 'known good');
    await inject(first, firstAdmin, 'POST', '/api/v1/config/commit-confirm', { timeout_seconds: 300 });
    await inject(first, firstAdmin, 'POST', '/api/v1/test/hosts', { name: 'lockout' });
    await first.app.context.apply.applyAll('admin', 'the change that cut us off');
    await first.app.close(); // the service goes down inside the window

    // back up within the window: still open, same deadline
    const clock = first.clock;
    clock.advance(100_000);
    const second = await startAreaApp({ areas: lifecycleAreas(newProbe()), dataDir, clock });
    const secondAdmin = second.headers;
    const open = json(await inject(second, secondAdmin, 'GET', '/api/v1/config/commit-confirm/status'));
    assert.equal(open.active, true);
    assert.equal(open.seconds_remaining, 200);
    await second.app.close();

    // down again past the deadline: the start-up reverts and re-applies
    clock.advance(300_000);
    const p3 = newProbe();
    const third = await startAreaApp({ areas: lifecycleAreas(p3), dataDir, clock });
    try {
      assert.deepEqual(p3.runs, [{ hosts: ['safe'] }], 'the rollback target was applied during start-up');
      const thirdAdmin = third.headers;
      const status = json(await inject(third, thirdAdmin, 'GET', '/api/v1/config/commit-confirm/status'));
      assert.equal(status.active, false);
      assert.equal(status.last.outcome, 'rolled_back');
      assert.equal(status.last.rollback_version, good.version!.version);
      const version = json(await inject(third, thirdAdmin, 'GET', '/api/v1/config/version'));
      assert.equal(version.hash, good.version!.hash);
      assert.equal(version.pending, false);
    } finally {
      await third.app.close();
    }
  } finally {
    const { rmSync } = await import('node:fs');
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('commit-confirm with apply: a failed apply is rolled back at once', async () => {
  await ok('POST', '/api/v1/test/hosts', { name: 'pending-change' }, 201);
  probe.failNext = true;
  const response = await call('POST', '/api/v1/config/commit-confirm', { timeout_seconds: 60, apply: true });
  assert.equal(response.statusCode, 409);
  assert.match(json(response).error, /rolled back to version \d+/);
  const status = await ok('GET', '/api/v1/config/commit-confirm/status');
  assert.equal(status.active, false);
  assert.equal(status.last.outcome, 'apply_failed');
  assert.ok(!t.app.context.store.list('test_host').some((o) => o.data.name === 'pending-change'));
});

test('export redacts every secret (collections and settings sections) and carries an integrity checksum', async () => {
  await ok('PUT', '/api/v1/test/settings', { mode: 'strict', token: 'settings-token-xyz' });
  await ok('POST', '/api/v1/test/hosts', { name: 'gamma', password: 'gamma-secret-3' }, 201);
  const exported = await ok('GET', '/api/v1/config/export');
  assert.equal(exported.format, 'bulwark-config');
  assert.equal(exported.format_version, 1);
  assert.equal(exported.secrets, 'redacted');
  assert.equal(exported.integrity.algorithm, 'sha256');
  const text = JSON.stringify(exported);
  for (const secret of ['gamma-secret-3', 'alpha-secret-1', 'settings-token-xyz', 'sealed:v1:']) assert.ok(!text.includes(secret), secret);
  const settings = exported.objects.find((o: { kind: string }) => o.kind === 'test_settings');
  assert.equal(settings.data.token, '**REDACTED**');
  assert.equal(settings.data.mode, 'strict');
  assert.ok(exported.secret_count >= 3);
});

test('a redacted export imports back onto the same appliance, secrets filled from the live configuration; tampering is refused', async () => {
  const exported = await ok('GET', '/api/v1/config/export');
  const gamma = t.app.context.store.list('test_host').find((o) => o.data.name === 'gamma')!;
  await ok('DELETE', `/api/v1/test/hosts/${gamma.id}`, undefined, 204);
  await ok('POST', '/api/v1/test/hosts', { name: 'delta' }, 201);
  const preview = await ok('POST', '/api/v1/config/import-preview', exported);
  assert.equal(preview.valid, false);
  assert.deepEqual(preview.errors, []);
  assert.deepEqual(preview.secrets.state, 'redacted');
  assert.deepEqual(preview.unresolved_secrets, ['test_host ' + gamma.id + ' password'], 'gamma was deleted: its secret cannot be filled');
  const refused = await call('POST', '/api/v1/config/import', exported);
  assert.equal(refused.statusCode, 400);
  assert.match(json(refused).error, /redacted secret\(s\) have no counterpart/);

  await ok('DELETE', `/api/v1/test/hosts/${t.app.context.store.list('test_host').find((o) => o.data.name === 'delta')!.id}`, undefined, 204);
  const fresh = await ok('GET', '/api/v1/config/export');
  await ok('POST', '/api/v1/test/hosts', { name: 'epsilon' }, 201);
  const tampered = structuredClone(fresh);
  tampered.objects.find((o: { kind: string }) => o.kind === 'test_host').data.port = 1;
  const bad = await call('POST', '/api/v1/config/import', tampered);
  assert.equal(bad.statusCode, 400);
  assert.match(json(bad).error, /integrity check failed/);
  const imported = await ok('POST', '/api/v1/config/import', fresh);
  assert.equal(imported.source, 'import');
  assert.equal(imported.hash, fresh.config_hash);
  assert.ok(!t.app.context.store.list('test_host').some((o) => o.data.name === 'epsilon'));
  const alpha = t.app.context.store.list('test_host').find((o) => o.data.name === 'alpha')!;
  assert.equal(t.app.context.models.get('test_host').secret(alpha, 'password'), 'alpha-secret-1');
});

test('a passphrase export moves secrets to another appliance; wrong passphrase and tampering are 400 and write nothing', async () => {
  assert.equal((await call('POST', '/api/v1/config/export', { passphrase: 'short' })).statusCode, 400);
  const portable = await ok('POST', '/api/v1/config/export', { passphrase: 'correct horse battery' });
  assert.equal(portable.secrets, 'passphrase');
  assert.equal(portable.kdf.name, 'scrypt');
  assert.equal(portable.kdf.N, 65536);
  assert.equal(portable.integrity.algorithm, 'hmac-sha256');
  const text = JSON.stringify(portable);
  assert.ok(!text.includes('alpha-secret-1') && !text.includes('settings-token-xyz') && !text.includes('sealed:v1:'));
  assert.match(portable.objects.find((o: { kind: string }) => o.kind === 'test_settings').data.token, /^pw:v1:/);

  const other = await startAreaApp({ areas: lifecycleAreas(newProbe()) });
  try {
    const otherAdmin = other.headers;
    const post = (url: string, payload: object) => other.app.inject({ method: 'POST', url, headers: otherAdmin, payload });
    const before = other.app.context.store.snapshot();
    const versionsBefore = other.app.context.apply.versions.list(1, 0).total;

    const missing = await post('/api/v1/config/import', portable);
    assert.equal(missing.statusCode, 400);
    assert.match(json(missing).error, /passphrase is required/);
    const wrong = await post('/api/v1/config/import', { ...portable, passphrase: 'wrong horse battery' });
    assert.equal(wrong.statusCode, 400);
    assert.match(json(wrong).error, /wrong passphrase/);
    const edited = structuredClone(portable);
    edited.objects.find((o: { kind: string }) => o.kind === 'test_host').data.port = 1;
    const tampered = await post('/api/v1/config/import', { ...edited, passphrase: 'correct horse battery' });
    assert.equal(tampered.statusCode, 400);
    assert.match(json(tampered).error, /integrity check failed/);
    const swapped = structuredClone(portable);
    const host = swapped.objects.find((o: { kind: string; data: { password?: string } }) => o.kind === 'test_host' && o.data.password);
    const section = swapped.objects.find((o: { kind: string }) => o.kind === 'test_settings');
    [host.data.password, section.data.token] = [section.data.token, host.data.password]; // wrapped values moved between objects
    assert.equal((await post('/api/v1/config/import', { ...swapped, passphrase: 'correct horse battery' })).statusCode, 400);
    assert.deepEqual(other.app.context.store.snapshot(), before, 'nothing was written');
    assert.equal(other.app.context.apply.versions.list(1, 0).total, versionsBefore);

    const preview = json(await post('/api/v1/config/import-preview', { ...portable, passphrase: 'correct horse battery' }));
    assert.equal(preview.valid, true);
    assert.deepEqual(preview.unresolved_secrets, []);
    const imported = await post('/api/v1/config/import', { ...portable, passphrase: 'correct horse battery' });
    assert.equal(imported.statusCode, 200, imported.body);
    const alpha = other.app.context.store.list('test_host').find((o) => o.data.name === 'alpha')!;
    assert.equal(other.app.context.models.get('test_host').secret(alpha, 'password'), 'alpha-secret-1', 'opened and re-sealed under the other appliance key');
    const settings = other.app.context.store.getSingleton('test_settings')!;
    assert.equal(other.app.context.sealer.open(settings.token as string), 'settings-token-xyz');
  } finally {
    await other.close();
  }
});

test('an import is validated like every other write: one bad object refuses the whole file', async () => {
  const exported = await ok('GET', '/api/v1/config/export');
  const before = t.app.context.store.snapshot();
  const body = structuredClone(exported);
  delete body.integrity;
  const host = body.objects.find((o: { kind: string }) => o.kind === 'test_host');
  host.data.group = 'no-such-group';
  const { integrityOf } = await import('../src/areas/config/export-format.js');
  body.integrity = integrityOf(body);
  const preview = await ok('POST', '/api/v1/config/import-preview', body);
  assert.equal(preview.valid, false);
  assert.ok(preview.errors.some((e: string) => /test_group "no-such-group", which does not exist/.test(e)));
  const refused = await call('POST', '/api/v1/config/import', body);
  assert.equal(refused.statusCode, 400);
  assert.match(json(refused).error, /import refused: 1 problem/);
  assert.deepEqual(t.app.context.store.snapshot(), before);
  for (const broken of [{}, { format: 'other' }, { ...exported, format_version: 99 }, { ...exported, objects: 'x' }]) {
    const response = await call('POST', '/api/v1/config/import', broken);
    assert.equal(response.statusCode, 400, JSON.stringify(broken).slice(0, 80));
  }
});

test('secrets never reach the database in plaintext, nor any response', async () => {
  t.app.context.db.pragma('wal_checkpoint(TRUNCATE)');
  const file = readFileSync(join(t.dataDir, 'bulwark.db'));
  for (const secret of ['alpha-secret-1', 'settings-token-xyz', 'correct horse battery']) assert.equal(file.includes(Buffer.from(secret)), false, secret);
});
