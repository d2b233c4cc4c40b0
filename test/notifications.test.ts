/**
 * Notifications (issue 40 item 2) through the API: a gateway taken down (its probe samples injected through
 * POST /multiwan/gateways/{id}/probe-now) sends one e-mail to a loopback SMTP server and one webhook whose
 * X-Bulwark-Signature verifies with the secret; a webhook that answers 503 once gets the notification on the
 * retry; flapping the gateway five times sends one summary per rate-limit window, not a storm.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, X509Certificate } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { SMTPServer } from 'smtp-server';
import { json } from './helpers/app.js';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';
import type { Notifier } from '../src/areas/events/notifier.js';
import { createSimulatedPlatform } from '../src/platform/simulated/index.js';
import type { SimulatedPacketFilter } from '../src/platform/simulated/packet-filter.js';
import { configOf, packetFilterOf } from './helpers/areas.js';
import { SupervisedProcess } from '../src/platform/supervised-process.js';

let t: AreaApp;
before(async () => {
  t = await startAreaApp();
});
after(() => t.close());

/** A webhook receiver on loopback: every request kept; `/flaky` answers 503 the first time, `/release` is a release feed. */
async function hookReceiver() {
  const hooks: { path: string; headers: IncomingHttpHeaders; body: string }[] = [];
  let flakyAnswered = 0;
  const receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      hooks.push({ path: request.url ?? '', headers: request.headers, body });
      if (request.url === '/flaky' && flakyAnswered++ === 0) response.writeHead(503).end('busy');
      else if (request.url === '/release') response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ tag_name: 'v99.0.0', body: 'notes', published_at: '2026-11-01T00:00:00Z', assets: [] }));
      else response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  return { hooks, port: (receiver.address() as { port: number }).port, close: () => receiver.close() };
}

async function until(what: string, done: () => boolean, deadlineMs = 30_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('gateway down: one e-mail and one signed webhook; a 503 is retried; flapping five times sends one summary per window', async () => {
  const mails: string[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, _session, callback) {
      let data = '';
      stream.on('data', (chunk: Buffer) => (data += chunk.toString()));
      stream.on('end', () => {
        mails.push(data);
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const receiver = await hookReceiver();
  const { hooks, port: hookPort } = receiver;
  try {
    const smtpPort = (smtp.server.address() as { port: number }).port;
    assert.equal((await t.request('PUT', '/api/v1/notify/smtp/config', { enabled: true, host: '127.0.0.1', port: smtpPort, tls: 'none', allowed_addresses: ['127.0.0.1'], recipients: 'noc@example.org' })).statusCode, 200);

    // Webhooks: the secret is write-only; a URL with credentials is refused.
    assert.equal((await t.request('POST', '/api/v1/notify/webhooks', { name: 'bad', url: 'http://user:pw@127.0.0.1/x' })).statusCode, 400);
    const created = await t.request('POST', '/api/v1/notify/webhooks', { name: 'noc', url: `http://127.0.0.1:${hookPort}/hook`, secret: 'hook-secret-7', allowed_addresses: ['127.0.0.1'] });
    assert.equal(created.statusCode, 201, created.body);
    assert.ok(!created.body.includes('hook-secret-7'));
    const hook = json(created);
    assert.equal(hook.has_secret, true);
    const flaky = json(await t.request('POST', '/api/v1/notify/webhooks', { name: 'flaky', url: `http://127.0.0.1:${hookPort}/flaky`, secret: 'other-secret', allowed_addresses: ['127.0.0.1'] }));
    // Loopback is refused without an allow-list entry (the outbound guard).
    const unguarded = json(await t.request('POST', '/api/v1/notify/webhooks', { name: 'unguarded', url: `http://127.0.0.1:${hookPort}/nope`, secret: 'x' }));
    const refused = await t.request('POST', `/api/v1/notify/webhooks/${unguarded.id}/test`);
    assert.equal(refused.statusCode, 400, refused.body);
    assert.match(json(refused).error, /refused/);

    const tested = await t.request('POST', `/api/v1/notify/webhooks/${hook.id}/test`);
    assert.equal(tested.statusCode, 200, tested.body);
    assert.equal(hooks.length, 1);
    assert.equal(hooks[0].headers['x-bulwark-signature'], `sha256=${createHmac('sha256', 'hook-secret-7').update(hooks[0].body).digest('hex')}`);
    hooks.length = 0;

    // Routing: unknown webhooks are refused, a webhook in use cannot be deleted.
    assert.equal((await t.request('PUT', '/api/v1/notify/events', [{ event: 'gateway_down', email: true, webhooks: ['00000000-0000-4000-8000-000000000000'] }])).statusCode, 400);
    assert.equal((await t.request('PUT', '/api/v1/notify/events', [{ event: 'no_such_event', email: true, webhooks: [] }])).statusCode, 400);
    const window = 3;
    const rules = [
      { event: 'gateway_down', email: true, webhooks: [hook.id, flaky.id], rate_limit_secs: window },
      { event: 'gateway_up', email: true, webhooks: [hook.id], rate_limit_secs: window },
    ];
    const put = await t.request('PUT', '/api/v1/notify/events', rules);
    assert.equal(put.statusCode, 200, put.body);
    assert.deepEqual(json(await t.request('GET', '/api/v1/notify/events')), rules);
    assert.equal((await t.request('DELETE', `/api/v1/notify/webhooks/${hook.id}`)).statusCode, 409);

    // A gateway probed only when told to (a one-hour interval), down after one failure, up after one success.
    const instance = json(await t.request('POST', '/api/v1/multiwan/instances', { name: 'isp', fib_number: 3 }));
    const gateway = json(await t.request('POST', '/api/v1/multiwan/gateways', { name: 'wan-a', instance_id: instance.id, interface: 'eth1', next_hop: '192.0.2.1', interval_ms: 3_600_000, consec_fail_down: 1, consec_ok_up: 1 }));
    const sample = async (success: boolean) => {
      const answer = await t.request('POST', `/api/v1/multiwan/gateways/${gateway.id}/probe-now`, { success, rtt_ms: success ? 5 : null, error: success ? null : 'no reply from 192.0.2.1' });
      assert.equal(answer.statusCode, 200, answer.body);
      return json(answer).state;
    };
    assert.equal(await sample(true), 'up');
    assert.equal(await sample(false), 'down');
    await until('the e-mail and both webhooks', () => mails.length >= 1 && hooks.filter((h) => h.path === '/hook').length >= 1 && hooks.filter((h) => h.path === '/flaky').length >= 2);
    assert.equal(mails.length, 1);
    assert.match(mails[0], /Subject: \[Bulwark\] gateway wan-a is down: no reply from 192\.0\.2\.1/);
    const [delivered] = hooks.filter((h) => h.path === '/hook');
    assert.equal(delivered.headers['content-type'], 'application/json');
    assert.equal(delivered.headers['x-bulwark-event'], 'gateway_down');
    const expected = `sha256=${createHmac('sha256', 'hook-secret-7').update(delivered.body).digest('hex')}`;
    assert.equal(delivered.headers['x-bulwark-signature'], expected, 'the signature verifies with the secret');
    const body = JSON.parse(delivered.body);
    assert.equal(body.event, 'gateway_down');
    assert.equal(body.payload.gateway_id, gateway.id);
    assert.equal(body.payload.name, 'wan-a');
    // The flaky webhook answered 503 first and got the same notification on the retry, signed with its own secret.
    const flakyCalls = hooks.filter((h) => h.path === '/flaky');
    assert.equal(flakyCalls.length, 2);
    assert.equal(flakyCalls[0].body, flakyCalls[1].body);
    assert.equal(flakyCalls[1].headers['x-bulwark-signature'], `sha256=${createHmac('sha256', 'other-secret').update(flakyCalls[1].body).digest('hex')}`);

    // Flapping: five more times up and down inside the window (the service clock stands still however slow the
    // machine is, and closing due windows changes nothing yet). Nothing more goes out until it closes...
    const notifier = (t.app.areas.find((area) => area.name === 'events') as unknown as { notifier: Notifier }).notifier;
    for (let flap = 0; flap < 5; flap++) {
      assert.equal(await sample(true), 'up');
      assert.equal(await sample(false), 'down');
    }
    t.clock.advance(window * 1000 - 1);
    assert.equal(notifier.closeDueWindows(), 0, 'the window is still open a millisecond before its end');
    await notifier.settled();
    assert.equal(mails.length, 1, 'no e-mail per flap');
    assert.equal(hooks.filter((h) => h.path === '/hook').length, 1, 'no webhook per flap');
    // ...then one summary per channel when the clock reaches its end, and nothing after it (the next window
    // closes with nothing to tell).
    t.clock.advance(1);
    assert.equal(notifier.closeDueWindows(), 1, 'the window closes at its end');
    await until('the summary', () => mails.length >= 2 && hooks.filter((h) => h.path === '/hook').length >= 2);
    t.clock.advance(window * 1000);
    assert.equal(notifier.closeDueWindows(), 1, 'the summary\'s window closes');
    assert.equal(notifier.openWindows(), 0, 'nothing to summarise, so no further window');
    await notifier.settled();
    assert.equal(mails.length, 2, 'one e-mail and one summary');
    const hookCalls = hooks.filter((h) => h.path === '/hook');
    assert.equal(hookCalls.length, 2, 'one webhook and one summary');
    const summary = JSON.parse(hookCalls[1].body);
    assert.equal(summary.summarised.count, 10, 'five ups and five downs summarised');
    assert.deepEqual(summary.summarised.events.sort(), ['gateway_down', 'gateway_up']);
    assert.equal(hookCalls[1].headers['x-bulwark-signature'], `sha256=${createHmac('sha256', 'hook-secret-7').update(hookCalls[1].body).digest('hex')}`);
    assert.match(mails[1], /Subject: \[Bulwark\] 10 more gateway_(up|down)\/gateway_(up|down) notification\(s\)/);
  } finally {
    smtp.close();
    receiver.close();
  }
});

test('the other notification events come from their producers: IDS alerts at or above min_severity, lockout, configuration applied and restored, update available', async () => {
  const receiver = await hookReceiver();
  try {
    const hook = json(await t.request('POST', '/api/v1/notify/webhooks', { name: 'producers', url: `http://127.0.0.1:${receiver.port}/events`, secret: 's', allowed_addresses: ['127.0.0.1'] }));
    const events = ['ids_alert', 'account_locked_out', 'config_applied', 'config_restored', 'update_available'];
    const put = await t.request('PUT', '/api/v1/notify/events', events.map((event) => ({ event, email: false, webhooks: [hook.id], ...(event === 'ids_alert' ? { min_severity: 'error' } : {}) })));
    assert.equal(put.statusCode, 200, put.body);
    const received = (event: string) => receiver.hooks.filter((h) => h.path === '/events' && h.headers['x-bulwark-event'] === event).map((h) => JSON.parse(h.body));

    // IDS: severity 1 (critical) passes min_severity error, severity 3 (warning) does not.
    const ids = (t.app.areas.find((area) => area.name === 'ids') as unknown as { service: { ingestEve(text: string): unknown } }).service;
    const alert = (sid: number, severity: number) => JSON.stringify({ timestamp: new Date().toISOString(), event_type: 'alert', src_ip: '198.51.100.7', src_port: 4444, dest_ip: '10.0.0.5', dest_port: 22, proto: 'TCP', alert: { signature_id: sid, signature: `test signature ${sid}`, severity, action: 'allowed' } });
    ids.ingestEve(`${alert(9100001, 1)}\n${alert(9100003, 3)}\n`);
    // Lockout: five failed logins of one user name.
    for (let attempt = 0; attempt < 5; attempt++) {
      const login = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'mallory', password: `guess-${attempt}` } });
      assert.equal(login.statusCode, 401);
    }
    // A reload applies the configuration (version 1); a restore of it is a restore.
    const reload = await t.request('POST', '/api/v1/reload', {});
    assert.equal(reload.statusCode, 200, reload.body);
    const restore = await t.request('POST', '/api/v1/config/restore', { version: json(reload).version ?? 1 });
    assert.equal(restore.statusCode, 200, restore.body);
    // The release feed (a loopback server the settings allow) names a newer version.
    assert.equal((await t.request('PUT', '/api/v1/settings/appliance_updates', { release_url: `http://127.0.0.1:${receiver.port}/release`, allow_private: '127.0.0.1', allow_http: 'true' })).statusCode, 200);
    const check = await t.request('POST', '/api/v1/updates/appliance/check');
    assert.equal(check.statusCode, 200, check.body);

    await until('a webhook for each event', () => events.every((event) => received(event).length > 0), 30_000).catch((error) => { throw new Error(`${error.message}: got ${JSON.stringify(receiver.hooks.map((h) => [h.path, h.headers['x-bulwark-event']]))}`); });
    const notifier = (t.app.areas.find((area) => area.name === 'events') as unknown as { notifier: Notifier }).notifier;
    await notifier.settled();
    assert.deepEqual(received('ids_alert').map((body) => body.payload.signature_id), [9100001], 'only the alert at or above the minimum severity');
    assert.equal(received('ids_alert')[0].severity, 'critical');
    // An unknown user's name is not recorded (the audit keeps it out too): the lockout names the address.
    assert.match(received('account_locked_out')[0].summary, /locked out after too many failed logins \(.*127\.0\.0\.1/);
    assert.equal(received('account_locked_out')[0].payload.client_ip, '127.0.0.1');
    assert.equal(received('config_applied')[0].payload.source !== 'restore', true);
    assert.equal(received('config_restored')[0].payload.source, 'restore');
    assert.equal(received('update_available')[0].payload.latest, '99.0.0');
  } finally {
    receiver.close();
  }
});

test('drift detected and repaired, a commit-confirm rollback, a failed certificate renewal and an expiring certificate reach a webhook from their producers', async () => {
  const platform = createSimulatedPlatform();
  const filter = platform.packetFilter as SimulatedPacketFilter;
  const app = await startAreaApp({ platform });
  const receiver = await hookReceiver();
  try {
    const hook = json(await app.request('POST', '/api/v1/notify/webhooks', { name: 'ops', url: `http://127.0.0.1:${receiver.port}/ops`, secret: 'ops-secret', allowed_addresses: ['127.0.0.1'] }));
    const events = ['drift_detected', 'drift_repaired', 'commit_confirm_rolled_back', 'certificate_renewal_failed', 'certificate_expiring'];
    // Drift and its repair share one event key (like a gateway's down and up): the repair comes as the summary of
    // the window the detection opened, here one second long.
    assert.equal((await app.request('PUT', '/api/v1/notify/events', events.map((event) => ({ event, email: false, webhooks: [hook.id], ...(event.startsWith('drift') ? { rate_limit_secs: 1 } : {}) })))).statusCode, 200);
    const received = (event: string) => receiver.hooks.filter((h) => h.headers['x-bulwark-event'] === event).map((h) => JSON.parse(h.body));

    // Drift: the kernel's ruleset changed by hand is seen by the check; a reload repairs it.
    assert.equal((await app.request('POST', '/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: 22 })).statusCode, 201);
    assert.equal((await app.request('POST', '/api/v1/reload', {})).statusCode, 200);
    await packetFilterOf(app.app).checkDrift();
    assert.match(filter.appliedText!, /tcp dport 22\b/);
    filter.appliedText = filter.appliedText!.replace(/tcp dport 22\b/, 'tcp dport 23');
    await packetFilterOf(app.app).checkDriftAside();
    assert.equal((await app.request('POST', '/api/v1/reload', {})).statusCode, 200);
    // The drift window's end on the service clock: the repair goes out as its summary (at the next check).
    app.clock.advance(1_000);

    // Commit-confirm: a window that is not confirmed rolls back.
    assert.equal((await app.request('POST', '/api/v1/config/commit-confirm', { timeout_seconds: 60 })).statusCode, 200);
    app.clock.advance(61_000);
    assert.equal(await configOf(app.app).commitConfirm.expireIfDue(), true);

    // ACME: an order that cannot be placed (no account) fails; a certificate 3 days from expiry is announced.
    const createdCert = await app.request('POST', '/api/v1/acme/certs', { common_name: 'fw.example.org', challenge_type: 'http-01' });
    assert.equal(createdCert.statusCode, 201, createdCert.body);
    const cert = json(createdCert);
    const renewed = await app.request('POST', `/api/v1/acme/certs/${cert.id}/renew`);
    assert.match(renewed.body, /no ACME account/);
    const acmeArea = app.app.areas.find((area) => area.name === 'acme') as unknown as { service: { certs: { update(id: string, patch: object): unknown } }; announceExpiring(): number };
    acmeArea.service.certs.update(cert.id, { expires_at: new Date(app.clock.now() + 3.5 * 86_400_000).toISOString() });
    assert.equal(acmeArea.announceExpiring(), 1);

    await until('a webhook for each event', () => events.every((event) => received(event).length > 0), 30_000)
      .catch((error) => { throw new Error(`${error.message}: got ${JSON.stringify(receiver.hooks.map((h) => h.headers['x-bulwark-event']))}`); });
    assert.match(received('drift_detected')[0].summary, /differs from the applied one/);
    assert.match(received('drift_repaired')[0].summary, /1 more drift_repaired notification\(s\) for drift in 1 s; latest: the kernel ruleset matches the applied one again/);
    assert.match(received('commit_confirm_rolled_back')[0].summary, /rolled back to version \d+/);
    assert.match(received('certificate_renewal_failed')[0].summary, /fw\.example\.org failed: no ACME account/);
    assert.equal(received('certificate_expiring')[0].payload.days_left, 3);
  } finally {
    receiver.close();
    await app.close();
  }
});

test('certificate_expiring covers the local CA (root and issued certificates, not revoked ones) and certificate files the reverse proxy serves, on the service clock', async () => {
  const app = await startAreaApp();
  const receiver = await hookReceiver();
  try {
    const hook = json(await app.request('POST', '/api/v1/notify/webhooks', { name: 'certs', url: `http://127.0.0.1:${receiver.port}/certs`, secret: 'c', allowed_addresses: ['127.0.0.1'] }));
    assert.equal((await app.request('PUT', '/api/v1/notify/events', [{ event: 'certificate_expiring', email: false, webhooks: [hook.id] }])).statusCode, 200);
    const announced: { certificate: string; source: string; days_left: number }[] = [];
    app.app.context.events.on('certificate.expiring', (event) => announced.push(event.payload as never));
    const check = () => {
      announced.length = 0;
      (app.app.areas.find((area) => area.name === 'acme') as unknown as { announceExpiring(): number }).announceExpiring();
      return announced.map((e) => `${e.source} ${e.certificate} ${e.days_left}`).sort();
    };

    assert.equal((await app.request('POST', '/api/v1/ca', { common_name: 'evr root', validity_days: 370 })).statusCode, 201);
    const issue = async (common_name: string, validity_days: number) => {
      const issued = await app.request('POST', '/api/v1/ca/certs', { cert_type: 'server', common_name, validity_days });
      assert.equal(issued.statusCode, 201, issued.body);
      return json(issued);
    };
    await issue('soon.evr.test', 10);
    await issue('later.evr.test', 365);
    const revoked = await issue('revoked.evr.test', 5);
    assert.equal((await app.request('POST', `/api/v1/ca/certs/${revoked.id}/revoke`)).statusCode, 200);
    // A certificate file the proxy serves (issued elsewhere: here by the CA, then given as files).
    const imported = await issue('imported.evr.test', 20);
    mkdirSync(join(app.dataDir, 'certs'), { recursive: true });
    writeFileSync(join(app.dataDir, 'certs', 'imported.pem'), imported.certificate_pem);
    writeFileSync(join(app.dataDir, 'certs', 'imported.key'), imported.private_key_pem, { mode: 0o600 });
    const tlsCert = await app.request('POST', '/api/v1/reverse-proxy/tls/certs', { name: 'imported-file', cert_file: join(app.dataDir, 'certs', 'imported.pem'), key_file: join(app.dataDir, 'certs', 'imported.key') });
    assert.equal(tlsCert.statusCode, 201, tlsCert.body);
    // The CA copy of the imported certificate is retired, so only the file speaks for it.
    assert.equal((await app.request('POST', `/api/v1/ca/certs/${imported.id}/revoke`)).statusCode, 200);

    // The root's and the file's expiry as X.509 states them (whole seconds): their days left, floored like every certificate's.
    const rootNotAfter = Date.parse(json(await app.request('GET', '/api/v1/ca')).not_after);
    const rootDays = () => Math.floor((rootNotAfter - app.clock.now()) / 86_400_000);
    const fileDays = () => Math.floor((Date.parse(new X509Certificate(imported.certificate_pem).validTo) - app.clock.now()) / 86_400_000);
    assert.deepEqual(check(), ['local-ca soon.evr.test 10']);
    app.clock.advance(7 * 86_400_000);
    assert.deepEqual(check(), [`file imported-file ${fileDays()}`, 'local-ca soon.evr.test 3']);
    app.clock.advance(353 * 86_400_000);
    assert.deepEqual(check(), [`file imported-file ${fileDays()}`, 'local-ca later.evr.test 5', 'local-ca soon.evr.test -350', `local-ca-root evr root ${rootDays()}`]);

    // Only the certificate_expiring posts: the receiver also gets other events' posts and the release feed's GET (no body).
    const fromCa = () => receiver.hooks.filter((h) => h.headers['x-bulwark-event'] === 'certificate_expiring').map((h) => JSON.parse(h.body)).find((b) => b.payload?.source === 'local-ca');
    await until('the CA certificate\'s webhook', () => fromCa() !== undefined);
    const body = fromCa();
    assert.equal(body.event, 'certificate_expiring');
    assert.match(body.summary, /certificate soon\.evr\.test expires in 10 day\(s\)/);
  } finally {
    receiver.close();
    await app.close();
  }
});

test('a supervised daemon that dies on its own and is restarted sends daemon_crashed and daemon_restarted', async () => {
  const receiver = await hookReceiver();
  // A process that writes a line and exits with status 3 after a moment, under the supervisor the daemons run under.
  let daemon: SupervisedProcess | undefined;
  try {
    const hook = json(await t.request('POST', '/api/v1/notify/webhooks', { name: 'daemons', url: `http://127.0.0.1:${receiver.port}/daemons`, secret: 'd', allowed_addresses: ['127.0.0.1'] }));
    assert.equal((await t.request('PUT', '/api/v1/notify/events', ['daemon_crashed', 'daemon_restarted'].map((event) => ({ event, email: false, webhooks: [hook.id] })))).statusCode, 200);
    let runs = 0;
    daemon = new SupervisedProcess({
      label: 'crashy', command: process.execPath, args: ['-e', 'console.log("crashy starting"); setTimeout(() => process.exit(3), 300)'],
      ready: async () => true, restartDelayMs: 100, afterRestart: async () => void runs++,
    });
    await daemon.start();
    const received = (event: string) => receiver.hooks.filter((h) => h.headers['x-bulwark-event'] === event).map((h) => JSON.parse(h.body));
    await until('daemon_crashed and daemon_restarted', () => received('daemon_crashed').length > 0 && received('daemon_restarted').length > 0);
    assert.match(received('daemon_crashed')[0].summary, /^crashy crashed: crashy exited with status 3/);
    assert.equal(received('daemon_restarted')[0].payload.daemon, 'crashy');
    assert.ok(runs >= 1);
  } finally {
    await daemon?.stop();
    receiver.close();
  }
});
