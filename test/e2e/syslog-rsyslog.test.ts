/**
 * Remote syslog for real (issue 40 item 1), from the other side: rsyslog (Debian) in a collector namespace listens
 * over UDP (514), TCP (601, octet counting) and TLS (6514, RFC 5425, a certificate for the collector's address
 * signed by a CA made here). Bulwark runs with --platform linux in a firewall namespace between a client and the
 * collector. Over each transport rsyslog receives a packet the filter blocked from the client (with the rule id),
 * an IDS alert (the fake engine of the IDS suite), a failed login and a rule change, each one well-formed RFC 5424
 * message (read back raw from rsyslog's file and parsed by test/helpers/rfc5424.ts, and rsyslog's own parser
 * agreeing on the MSGID). Then rsyslog is stopped for 10 s while rules change, and started again: nothing is lost
 * within the queue bound; beyond the bound the oldest messages are dropped and counted. TLS refuses a collector
 * whose certificate does not name the host, and one signed by another CA.
 *
 * The second test is notifications from the other side: a multi-WAN gateway (another address of a collector
 * namespace, probed with ping) is taken down; an SMTP server and a webhook receiver in that namespace
 * (fixtures/notify-sink.mjs) get one e-mail and one webhook whose signature verifies, and five more flaps inside
 * the rate-limit window send nothing more (held for the summary at its end). The window outlasts the test's timeout,
 * so how fast the machine flaps the gateway does not matter.
 */
import { test } from 'node:test';
import { createHmac } from 'node:crypto';
import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findProgram } from '../../src/platform/daemon-tools.js';
import { sharedFile } from '../helpers/shared.js';
import { systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';
import { inNamespace, NetnsLab, ROOT, run } from '../helpers/netns-lab.js';
import { daemonLogWith } from '../helpers/daemon-log-file.js';
import { parseRfc5424 } from '../helpers/rfc5424.js';
import { enginePid } from '../helpers/fake-suricata.js';

const EVE = sharedFile('fixtures/suricata/eve/tunnel-testing-detectable-raw-noise-eve.json');
const RULES = sharedFile('fixtures/suricata/tunnel-testing-custom.rules');
const PORTS = { udp: 514, tcp: 601, tls: 6514 } as const;
type Transport = keyof typeof PORTS;

const skipReason = () => systemSkip('the remote syslog namespace lab', {
  root: true,
  programs: ['rsyslogd', 'openssl', 'ulogd'],
  also: [
    ['rsyslog-gnutls (the gtls stream driver)', existsSync('/usr/lib/x86_64-linux-gnu/rsyslog/lmnsd_gtls.so') || existsSync('/usr/lib/aarch64-linux-gnu/rsyslog/lmnsd_gtls.so')],
    ['a host without a real suricata on PATH', !findProgram('suricata')],
  ],
}) || EVE.skip || RULES.skip;

async function until<T>(what: string, probe: () => T | undefined | false, deadlineMs = 60_000, detail: () => string = () => ''): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${detail()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A CA and a certificate for `address` (an IP SAN) signed by it, in `dir`. */
function makePki(dir: string, name: string, address: string): { ca: string; cert: string; key: string } {
  const file = (suffix: string) => join(dir, `${name}-${suffix}`);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  run('openssl', ['req', '-x509', ...ec, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', `/CN=${name} test CA`]);
  run('openssl', ['req', ...ec, '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', '/CN=collector']);
  writeFileSync(file('ext'), `subjectAltName=IP:${address}\n`);
  run('openssl', ['x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file('server.pem'), '-days', '2', '-extfile', file('ext')]);
  return { ca: file('ca.pem'), cert: file('server.pem'), key: file('server.key') };
}

/** rsyslog: one input per transport, each writing `MSGID<TAB>raw message` lines to its own file. */
function rsyslogConfig(dir: string, pki: { ca: string; cert: string; key: string }): string {
  return [
    `global(workDirectory="${dir}" DefaultNetstreamDriverCAFile="${pki.ca}" DefaultNetstreamDriverCertFile="${pki.cert}" DefaultNetstreamDriverKeyFile="${pki.key}")`,
    'module(load="imudp")',
    'module(load="imtcp" maxSessions="64")',
    'template(name="raw" type="string" string="%msgid%\\t%rawmsg%\\n")',
    ...Object.keys(PORTS).map((name) => `ruleset(name="${name}") { action(type="omfile" file="${join(dir, `${name}.log`)}" template="raw") }`),
    `input(type="imudp" port="${PORTS.udp}" ruleset="udp")`,
    `input(type="imtcp" port="${PORTS.tcp}" ruleset="tcp")`,
    `input(type="imtcp" port="${PORTS.tls}" ruleset="tls" streamDriver.name="gtls" streamDriver.mode="1" streamDriver.authMode="anon")`,
    '',
  ].join('\n');
}

interface Received {
  rsyslogMsgid: string;
  raw: string;
  parsed: ReturnType<typeof parseRfc5424>;
  params: Record<string, string>;
}

/** Every line rsyslog wrote for a transport, each parsed as RFC 5424 (a line that is not fails the test). */
function received(dir: string, transport: Transport): Received[] {
  const path = join(dir, `${transport}.log`);
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').split('\n').filter(Boolean).map((line) => {
    const tab = line.indexOf('\t');
    const raw = line.slice(tab + 1);
    const parsed = parseRfc5424(raw);
    return { rsyslogMsgid: line.slice(0, tab), raw, parsed, params: Object.fromEntries(parsed.elements.flatMap((element) => element.params)) };
  });
}


test('remote syslog: rsyslog receives blocked packets, IDS alerts, failed logins and rule changes over UDP, TCP and TLS as RFC 5424; a 10 s outage loses nothing within the queue bound', { skip: skipReason(), timeout: 300_000 }, async (t) => {
  const lab = new NetnsLab('b40s');
  const savedPath = process.env.PATH;
  const collectorDir = mkdtempSync(join(tmpdir(), 'bulwark-rsyslog-'));
  let rsyslog: ChildProcess | null = null;
  try {
    const fw = lab.namespace('fw');
    const client = lab.namespace('cl');
    const collector = lab.namespace('co');
    const clientLink = `b40c${lab.tag}`;
    lab.link({ ns: fw, name: clientLink, address: '10.240.1.1/24' }, { ns: client, name: `b40d${lab.tag}`, address: '10.240.1.2/24' });
    lab.link({ ns: fw, name: `b40e${lab.tag}`, address: '10.240.2.1/24' }, { ns: collector, name: `b40g${lab.tag}`, address: '10.240.2.2/24' });
    // A second address of the collector that its certificate does not name.
    run('ip', ['-n', collector, 'addr', 'add', '10.240.2.3/24', 'dev', `b40g${lab.tag}`]);

    const pki = makePki(collectorDir, 'collector', '10.240.2.2');
    const otherPki = makePki(collectorDir, 'other', '10.240.2.2');
    writeFileSync(join(collectorDir, 'rsyslog.conf'), rsyslogConfig(collectorDir, pki));
    const startRsyslog = async () => {
      rsyslog = lab.spawnIn(collector, 'rsyslogd', ['-n', '-f', join(collectorDir, 'rsyslog.conf'), '-i', join(collectorDir, 'rsyslogd.pid')]);
      let output = '';
      rsyslog.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      await until('rsyslog listening on 514/udp, 601/tcp and 6514/tcp', () => {
        const sockets = inNamespace(collector, 'ss', ['-Hlnut']);
        return [`:${PORTS.udp} `, `:${PORTS.tcp} `, `:${PORTS.tls} `].every((port) => sockets.includes(port));
      }, 30_000, () => output);
    };
    const stopRsyslog = async () => {
      const child = rsyslog!;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    };
    await startRsyslog();

    // The fake Suricata on PATH (Suricata is not packaged in Debian 12).
    const bin = join(lab.dataDir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'suricata'), `#!/bin/sh\nexec ${process.execPath} ${join(ROOT, 'test/e2e/fixtures/fake-suricata.mjs')} "$@"\n`);
    chmodSync(join(bin, 'suricata'), 0o755);
    process.env.PATH = `${bin}:${savedPath}`;
    process.env.FAKE_SURICATA_EVE = EVE.path;
    lab.startBulwark(fw, await freePort());

    const blockRule = lab.call('POST', '/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: 9, log: true, description: 'e2e: port 9 is closed' });
    lab.call('POST', '/api/v1/reload', {});
    lab.call('POST', '/api/v1/ids/rulesets', { name: 'tunnel-testing', rule_format: 'suricata', rules_text: readFileSync(RULES.path, 'utf8') });
    lab.call('PUT', '/api/v1/ids/config', { mode: 'ids', interfaces: [clientLink], home_net: ['10.240.1.0/24'] });
    lab.call('POST', '/api/v1/ids/reload');
    const engine = (await until('the IDS engine', () => enginePid(fw), 30_000)) as number;
    // ulogd2's own log and the IDS engine's output (the fake engine stands in for Suricata) are in the local logs.
    await daemonLogWith(lab.dataDir, 'ulogd', /building new pluginstance stack/);
    await daemonLogWith(lab.dataDir, 'suricata', /Engine started/);

    const syslog = (transport: Transport, extra: Record<string, unknown> = {}) => lab.call('PUT', '/api/v1/settings/syslog', {
      enabled: true, host: '10.240.2.2', port: PORTS[transport], transport, format: 'rfc5424', facility: 16, hostname_override: 'fw-lab',
      allowed_addresses: ['10.240.2.0/24'], pf_enabled: true, ids_enabled: true, audit_enabled: true, app_enabled: false, daemon_enabled: false,
      ca_pem: transport === 'tls' ? readFileSync(pki.ca, 'utf8') : '', ...extra,
    });
    const failedLogin = (username: string) => {
      const script = `const r = await fetch(${JSON.stringify(`${lab.base}/api/v1/auth/login`)}, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: ${JSON.stringify(username)}, password: 'wrong-password' }) }); console.log(r.status);`;
      return inNamespace(fw, process.execPath, ['--input-type=module', '-e', script]).trim();
    };

    for (const transport of ['udp', 'tcp', 'tls'] as const) {
      syslog(transport);
      // A packet the filter blocks, from the client.
      inNamespace(client, process.execPath, [join(ROOT, 'test/e2e/fixtures/tcp-ask.mjs'), '10.240.1.1', '9', '1000']);
      // IDS alerts: the engine appends the EVE fixture.
      process.kill(engine, 'SIGUSR1');
      // The administrator's name with a wrong password (an unknown user's name is not recorded at all).
      assert.equal(failedLogin('admin'), '401');
      const changed = lab.call('POST', '/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: 7000 + PORTS[transport] % 100, description: `syslog over ${transport}` });

      const messages = await until(`the four kinds of message over ${transport}`, () => {
        const lines = received(collectorDir, transport);
        const pf = lines.find((m) => m.parsed.msgid === 'PF' && m.params.rule_id === blockRule.id && m.params.src === '10.240.1.2' && m.params.dst_port === '9');
        const ids = lines.find((m) => m.parsed.msgid === 'IDS');
        const login = lines.find((m) => m.parsed.msgid === 'AUDIT' && m.params.category === 'auth' && m.params.action === 'login_failed' && m.params.actor === 'admin');
        const rule = lines.find((m) => m.parsed.msgid === 'AUDIT' && m.params.category === 'config' && m.params.object_id === changed.id);
        return pf && ids && login && rule ? { pf, ids, login, rule } : undefined;
      }, 60_000, () => `${readFileSync(join(collectorDir, `${transport}.log`), 'utf8').slice(-3000)}\n${lab.log}`);

      for (const [kind, message] of Object.entries(messages)) {
        assert.equal(message.parsed.hostname, 'fw-lab', kind);
        assert.equal(message.rsyslogMsgid, message.parsed.msgid, `${kind}: rsyslog parsed the same RFC 5424 MSGID`);
        assert.ok(message.parsed.elements.every((element) => element.id.endsWith('@32473')), kind);
        assert.ok(message.parsed.msg.length > 0, `${kind}: a readable MSG`);
      }
      assert.equal(messages.pf.params.action, 'block');
      assert.equal(messages.pf.params.protocol, 'tcp');
      assert.equal(messages.pf.params.interface, clientLink);
      assert.equal(messages.pf.params.dst, '10.240.1.1');
      assert.match(messages.pf.parsed.msg, new RegExp(`^block tcp 10\\.240\\.1\\.2:\\d+ -> 10\\.240\\.1\\.1:9 on ${clientLink} \\(rule ${blockRule.id}\\)$`));
      assert.ok(Number(messages.ids.params.sid) > 0 && messages.ids.params.signature, JSON.stringify(messages.ids.params));
      assert.equal(messages.login.params.outcome, 'failure');
      assert.equal(messages.login.params.details, 'wrong password');
      assert.equal(messages.rule.params.action, 'create');
      assert.equal(messages.rule.params.object_kind, 'rule');
      assert.equal(messages.rule.params.actor, 'admin');
      t.diagnostic(`${transport}: ${received(collectorDir, transport).length} messages received, e.g. ${messages.pf.raw}`);
    }
    // The application log (Bulwark runs at --log-level warn; app_min_level info lowers what the tap sees, not what
    // standard output prints) and the daemons' own output: a rule change reaches the IDS engine, which logs it.
    syslog('tls', { app_enabled: true, app_min_level: 'info', daemon_enabled: true });
    const idsRule = lab.call('GET', '/api/v1/ids/rules?limit=1')[0];
    lab.call('PUT', `/api/v1/ids/rules/${idsRule.id}`, { enabled: false });
    lab.call('POST', '/api/v1/ids/reload');
    const appAndDaemon = await until('an application log line and a daemon line over TLS', () => {
      const lines = received(collectorDir, 'tls');
      const app = lines.find((m) => m.parsed.msgid === 'APP' && m.parsed.msg === 'request' && m.params.path === '/api/v1/ids/reload' && m.params.level === 'info');
      const daemon = lines.find((m) => m.parsed.msgid === 'DAEMON' && /rule reload starting/.test(m.parsed.msg));
      return app && daemon ? { app, daemon } : undefined;
    }, 60_000, () => readFileSync(join(collectorDir, 'tls.log'), 'utf8').slice(-3000));
    assert.equal(appAndDaemon.app.params.status, '200');
    assert.equal(appAndDaemon.daemon.parsed.app, 'suricata');
    assert.ok(!/"msg":"request"/.test(lab.log), 'standard output still at warn');

    const status = lab.call('GET', '/api/v1/settings/syslog/status') as { category: string; sent: number; errors: number; dropped: number; connected: boolean }[];
    const row = (category: string) => status.find((r) => r.category === category)!;
    for (const category of ['pf', 'ids', 'audit', 'app', 'daemon']) assert.ok(row(category).sent > 0, `${category} counted: ${JSON.stringify(status)}`);
    assert.equal(row('all').connected, true);

    // TLS: a certificate that does not name the host, or signed by another CA, is refused.
    const misnamed = lab.api(['POST', '/api/v1/settings/syslog/test', { host: '10.240.2.3', port: PORTS.tls, transport: 'tls', ca_pem: readFileSync(pki.ca, 'utf8'), allowed_addresses: ['10.240.2.0/24'] }]);
    assert.equal(misnamed[0].status, 502, JSON.stringify(misnamed));
    assert.match(misnamed[0].body.error, /IP: 10\.240\.2\.3 is not in the cert's list/);
    const otherCa = lab.api(['POST', '/api/v1/settings/syslog/test', { host: '10.240.2.2', port: PORTS.tls, transport: 'tls', ca_pem: readFileSync(otherPki.ca, 'utf8'), allowed_addresses: ['10.240.2.0/24'] }]);
    assert.equal(otherCa[0].status, 502, JSON.stringify(otherCa));
    assert.match(otherCa[0].body.error, /certificate/i);

    // An outage of 10 s over TCP: rule changes meanwhile wait in the queue and arrive once rsyslog is back.
    syslog('tcp', { pf_enabled: false, ids_enabled: false, queue_limit: 100 });
    await until('the TCP connection', () => (lab.call('GET', '/api/v1/settings/syslog/status') as typeof status).find((r) => r.category === 'all')!.connected);
    await stopRsyslog();
    await until('Bulwark to see the collector gone', () => !(lab.call('GET', '/api/v1/settings/syslog/status') as typeof status).find((r) => r.category === 'all')!.connected);
    const stoppedAt = Date.now();
    const during: string[] = [];
    for (let second = 0; Date.now() - stoppedAt < 10_000; second++) {
      during.push(lab.call('POST', '/api/v1/aliases', { name: `outage_${second}`, alias_type: 'host', entries: [`10.9.${second}.1`] }).id);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    await startRsyslog();
    const outageIds = (lines: Received[]) => lines.filter((m) => m.parsed.msgid === 'AUDIT' && during.includes(m.params.object_id)).map((m) => m.params.object_id);
    await until(`the ${during.length} changes made during the outage`, () => outageIds(received(collectorDir, 'tcp')).length >= during.length, 90_000);
    assert.deepEqual(outageIds(received(collectorDir, 'tcp')), during, 'each change once, in order');
    t.diagnostic(`${during.length} changes made while rsyslog was stopped for ${Date.now() - stoppedAt} ms all arrived after it restarted`);

    // Beyond the bound: 130 changes while it is away with a queue of 100. The status is read in the same batch (one
    // sign-in, before the first read): whatever was queued before plus the 130, less 100, is dropped — the oldest.
    await until('the TCP connection again', () => (lab.call('GET', '/api/v1/settings/syslog/status') as typeof status).find((r) => r.category === 'all')!.connected);
    await stopRsyslog();
    await until('Bulwark to see the collector gone again', () => !(lab.call('GET', '/api/v1/settings/syslog/status') as typeof status).find((r) => r.category === 'all')!.connected);
    const batch = lab.api(
      ['GET', '/api/v1/settings/syslog/status'],
      ...Array.from({ length: 130 }, (_, i) => ['POST', '/api/v1/aliases', { name: `burst_${i}`, alias_type: 'host', entries: [`10.8.${i}.1`] }] as [string, string, unknown]),
      ['GET', '/api/v1/settings/syslog/status'],
    );
    const total = (answer: { body: unknown }) => (answer.body as (typeof status[number] & { queued: number })[]).find((r) => r.category === 'all')!;
    const [before, after] = [total(batch[0]), total(batch.at(-1)!)];
    const burst = batch.slice(1, -1).map((answer) => {
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      return (answer.body as { id: string }).id;
    });
    assert.equal(after.queued, 100, 'the queue holds its bound');
    assert.equal(after.dropped - before.dropped, before.queued + 130 - 100, `the oldest dropped and counted: ${JSON.stringify({ before, after })}`);
    await startRsyslog();
    const burstIds = (lines: Received[]) => lines.filter((m) => m.parsed.msgid === 'AUDIT' && burst.includes(m.params.object_id)).map((m) => m.params.object_id);
    await until('the newest 100 of the burst', () => burstIds(received(collectorDir, 'tcp')).length >= 100, 90_000);
    assert.deepEqual(burstIds(received(collectorDir, 'tcp')), burst.slice(30), 'the newest 100, in order; the oldest 30 of the burst dropped');
  } finally {
    process.env.PATH = savedPath;
    delete process.env.FAKE_SURICATA_EVE;
    await lab.cleanup();
    rmSync(collectorDir, { recursive: true, force: true });
  }
});

/** The notification test's rate-limit window: longer than its test may run (timeout 240 s), so no flap can fall outside it. */
const RATE_LIMIT_SECS = 600;

test('notifications in namespaces: a gateway taken down sends one e-mail and one signed webhook to a collector namespace; five flaps inside the rate-limit window send no more', { skip: systemSkip('the notification namespace lab', { root: true, programs: ['ping'] }), timeout: 240_000 }, async (t) => {
  const lab = new NetnsLab('b40n');
  try {
    const fw = lab.namespace('fw');
    const collector = lab.namespace('co');
    const link = `b40n${lab.tag}`;
    lab.link({ ns: fw, name: link, address: '10.241.2.1/24' }, { ns: collector, name: `b40m${lab.tag}`, address: '10.241.2.2/24' });
    // The gateway is another address of the collector namespace: removing it takes the gateway down.
    const gatewayUp = () => run('ip', ['-n', collector, 'addr', 'add', '10.241.2.4/24', 'dev', `b40m${lab.tag}`]);
    const gatewayDown = () => run('ip', ['-n', collector, 'addr', 'del', '10.241.2.4/24', 'dev', `b40m${lab.tag}`]);
    gatewayUp();
    const out = join(lab.dataDir, 'notify-sink.jsonl');
    lab.spawnIn(collector, process.execPath, [join(ROOT, 'test/e2e/fixtures/notify-sink.mjs'), '10.241.2.2', '2525', '8088', out]);
    const sunk = () => (existsSync(out) ? readFileSync(out, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line)) : []) as { kind: string; data?: string; path?: string; headers?: Record<string, string>; body?: string }[];
    await until('the SMTP and webhook receivers', () => {
      const sockets = inNamespace(collector, 'ss', ['-Hlnt']);
      return sockets.includes(':2525 ') && sockets.includes(':8088 ');
    }, 30_000);
    lab.startBulwark(fw, await freePort());

    lab.call('PUT', '/api/v1/notify/smtp/config', { enabled: true, host: '10.241.2.2', port: 2525, tls: 'none', allowed_addresses: ['10.241.2.2'], recipients: 'noc@example.org' }, 200);
    const hook = lab.call('POST', '/api/v1/notify/webhooks', { name: 'noc', url: 'http://10.241.2.2:8088/bulwark', secret: 'namespace-secret', allowed_addresses: ['10.241.2.2'] });
    lab.call('PUT', '/api/v1/notify/events', [
      { event: 'gateway_down', email: true, webhooks: [hook.id], rate_limit_secs: RATE_LIMIT_SECS },
      { event: 'gateway_up', email: true, webhooks: [hook.id], rate_limit_secs: RATE_LIMIT_SECS },
    ], 200);
    const instance = lab.call('POST', '/api/v1/multiwan/instances', { name: 'isp', fib_number: 4 });
    const gateway = lab.call('POST', '/api/v1/multiwan/gateways', { name: 'wan-lab', instance_id: instance.id, interface: link, next_hop: '10.241.2.4', monitor_kind: 'icmp', interval_ms: 300, timeout_ms: 300, consec_fail_down: 3, consec_ok_up: 3 });
    const state = () => lab.call('GET', `/api/v1/multiwan/gateways/${gateway.id}`).state as string;
    await until('the gateway up', () => state() === 'up', 30_000);

    gatewayDown();
    await until('the gateway down', () => state() === 'down', 30_000);
    await until('one e-mail and one webhook', () => sunk().some((e) => e.kind === 'mail') && sunk().some((e) => e.kind === 'hook'), 30_000, () => JSON.stringify(sunk()));
    const [mail] = sunk().filter((e) => e.kind === 'mail');
    assert.match(mail.data!, /Subject: \[Bulwark\] gateway wan-lab is down/);
    const [delivered] = sunk().filter((e) => e.kind === 'hook');
    assert.equal(delivered.headers!['x-bulwark-signature'], `sha256=${createHmac('sha256', 'namespace-secret').update(delivered.body!).digest('hex')}`, 'the signature verifies');
    assert.equal(JSON.parse(delivered.body!).event, 'gateway_down');

    // Five more flaps: each one a real state change, none a new notification (held for the summary). They fall inside
    // the window whatever the machine's speed: it is RATE_LIMIT_SECS long and the test's own timeout is shorter, so it
    // cannot close before the test ends (which is checked on the gateway's own event times below, not on the wall).
    for (let flap = 0; flap < 5; flap++) {
      gatewayUp();
      await until('the gateway up again', () => state() === 'up', 30_000);
      gatewayDown();
      await until('the gateway down again', () => state() === 'down', 30_000);
    }
    const downs = (lab.call('GET', `/api/v1/multiwan/gateways/${gateway.id}/events`) as { to_state: string; ts: string }[])
      .filter((e) => e.to_state === 'down').map((e) => Date.parse(e.ts)).sort((a, b) => a - b);
    assert.ok(downs.length >= 6, `six times down: ${downs.length}`);
    const spanMs = downs.at(-1)! - downs[0];
    assert.ok(spanMs < RATE_LIMIT_SECS * 1000, `every down inside the window the first one opened (${spanMs} ms apart, window ${RATE_LIMIT_SECS} s)`);
    t.diagnostic(`six downs ${spanMs} ms apart on the gateway's event times, inside the ${RATE_LIMIT_SECS} s window`);
    assert.equal(sunk().filter((e) => e.kind === 'mail').length, 1, 'one e-mail for six downs');
    assert.equal(sunk().filter((e) => e.kind === 'hook').length, 1, 'one webhook for six downs');
  } finally {
    await lab.cleanup();
  }
});
