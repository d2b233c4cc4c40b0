import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { json } from '../helpers/app.js';
import { startAreaApp } from '../helpers/area-app.js';
import { headersWithPermissions } from '../helpers/auth.js';

interface LogEntry { source: string; action: string; actor: string | null; details: string }
interface AuditRecord { action: string; actor: string | null; details: string | null }

test('GET /logs does not reveal the auth trail without users:read; names that are no account are never logged', async () => {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const t = await startAreaApp({ logger: { level: 'trace', stream } });
  try {
    const admin = t.headers;
    const logsOnly = await headersWithPermissions(t.app, ['logs:view'], admin);
    assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/config/save', headers: admin, payload: {} })).statusCode < 300, true);

    // A password typed into the username field, six times from one address: failures, a lockout, a refusal.
    const typedName = 'Correct-Horse-Battery-9';
    for (let i = 0; i < 6; i++) {
      await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: typedName, password: 'whatever-1' }, remoteAddress: '203.0.113.5' });
    }
    await t.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { username: typedName, password: 'Another-pass-1' } });

    const logsFor = async (headers: Record<string, string>) => {
      const response = await t.app.inject({ url: '/api/v1/logs?source=audit&limit=1000', headers });
      assert.equal(response.statusCode, 200);
      return json<LogEntry[]>(response);
    };
    const asLogsOnly = await logsFor(logsOnly);
    assert.deepEqual(asLogsOnly.filter((e) => e.action.startsWith('auth.')), [], 'no auth event for a caller without users:read');
    assert.ok(asLogsOnly.some((e) => e.action === 'config.config.save'), 'the rest of the audit trail is still there');
    const asAdmin = await logsFor(admin);
    assert.ok(asAdmin.some((e) => e.action === 'auth.login_success' && e.actor === 'admin'), 'users:read sees the auth trail');
    assert.ok(asAdmin.some((e) => e.action === 'auth.login_failed' && e.actor === null && /unknown user/.test(e.details)));
    assert.ok(asAdmin.some((e) => e.action === 'auth.lockout' && /ipuser:203\.0\.113\.5\b/.test(e.details)));

    const trail = json<AuditRecord[]>(await t.app.inject({ url: '/api/v1/auth/audit?limit=1000', headers: admin }));
    assert.ok(trail.some((e) => e.action === 'login_rate_limited' && e.actor === null));
    const everything = [JSON.stringify(asAdmin), JSON.stringify(trail), lines.join('')];
    for (const [index, text] of everything.entries()) {
      assert.equal(text.toLowerCase().includes(typedName.toLowerCase()), false, `the attempted name is in ${['GET /logs', 'GET /auth/audit', 'the app log'][index]}`);
    }
  } finally {
    await t.close();
  }
});
