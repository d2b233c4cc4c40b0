/**
 * Argument injection into the probe tools (issue 31, item 1): a gateway's monitor_target, monitor_expect and
 * interface reach `ping` and `dig` argument vectors, so the API holds them to a grammar (400 naming the field,
 * for an operator as for anyone), the probe checks them again, operands sit behind `--` or their option, and
 * the tools (ping, dig, nsupdate) run as the unprivileged probe account. Fake tools on PATH record the uid
 * they ran as and their argument vector.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { json } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';
import { probeGateway } from '../../src/platform/gateway-probes.js';
import { sendDnsUpdate } from '../../src/platform/nsupdate.js';
import { rootSkipReason } from '../helpers/shared.js';

const DEFAULT_INSTANCE = '61696677-0000-0000-0000-000000000000';
const api = '/api/v1/multiwan/gateways';
let t: AreaApp;
let operator: Record<string, string>;

before(async () => {
  t = await startAreaApp();
  const created = await t.request('POST', '/api/v1/auth/users', { username: 'oscar', password: 'Operator-pass1', role: 'operator' });
  assert.equal(created.statusCode, 201, created.body);
  const login = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'oscar', password: 'Operator-pass1' } });
  operator = { authorization: `Bearer ${json(login).access_token as string}` };
});
after(() => t.close());

const asOperator = (method: 'POST' | 'PUT', url: string, payload: object) => t.app.inject({ method, url, headers: operator, payload });
const gateway = (extra: object) => ({ name: `g${Math.random().toString(36).slice(2, 8)}`, instance_id: DEFAULT_INSTANCE, interface: 'eth1', next_hop: '192.0.2.1', ...extra });

test('POST /multiwan/gateways: hostile monitor_expect, monitor_target and interface answer 400 naming the field', async () => {
  const hostile: [object, string][] = [
    [{ monitor_kind: 'dns', monitor_target: '192.0.2.53', monitor_expect: '-f/etc/shadow' }, 'monitor_expect'],
    [{ monitor_kind: 'dns', monitor_target: '192.0.2.53', monitor_expect: '+vc' }, 'monitor_expect'],
    [{ monitor_kind: 'dns', monitor_target: '192.0.2.53', monitor_expect: 'a b' }, 'monitor_expect'],
    [{ monitor_kind: 'http', monitor_target: '192.0.2.80', monitor_expect: '-o/etc/passwd' }, 'monitor_expect'],
    [{ monitor_kind: 'icmp', monitor_expect: '-f' }, 'monitor_expect'],
    [{ monitor_kind: 'icmp', monitor_target: '-f' }, 'monitor_target'],
    [{ monitor_kind: 'icmp', monitor_target: '-c100000' }, 'monitor_target'],
    [{ monitor_kind: 'dns', monitor_target: '-f/etc/shadow' }, 'monitor_target'],
    [{ monitor_kind: 'dns', monitor_target: '192.0.2.53 -f/etc/shadow' }, 'monitor_target'],
    [{ monitor_kind: 'tcp', monitor_target: '--help' }, 'monitor_target'],
    [{ monitor_kind: 'http', monitor_target: 'http://user:secret@192.0.2.80/' }, 'monitor_target'],
    [{ monitor_kind: 'http', monitor_target: 'file:///etc/shadow' }, 'monitor_target'],
    [{ interface: '-foo' }, 'interface'],
  ];
  for (const [fields, field] of hostile) {
    const answer = await asOperator('POST', api, gateway(fields));
    assert.equal(answer.statusCode, 400, `${JSON.stringify(fields)}: ${answer.body}`);
    assert.match(json(answer).error, new RegExp(`body\\.${field}\\b`), JSON.stringify(fields));
  }
  // The same values through a PUT of an existing gateway (the whole record is held to the grammar).
  // The gateway's own next hop (192.0.2.1) is a target any writer may probe.
  const created = await asOperator('POST', api, gateway({ monitor_kind: 'dns', monitor_target: '192.0.2.1', monitor_expect: 'example.org' }));
  assert.equal(created.statusCode, 201, created.body);
  const id = json(created).id as string;
  const changed = await asOperator('PUT', `${api}/${id}`, { monitor_expect: '-f/etc/shadow' });
  assert.equal(changed.statusCode, 400, changed.body);
  assert.match(json(changed).error, /body\.monitor_expect/);
  // Honest values pass: host names, addresses, an http URL and a status.
  for (const fields of [
    { monitor_kind: 'dns', monitor_target: 'dns.example.net', monitor_expect: 'example.org.' },
    { monitor_kind: 'http', monitor_target: 'https://probe.example.net:8443/health', monitor_expect: '204' },
    { monitor_kind: 'icmp', monitor_target: '2001:db8::1' },
  ]) {
    const ok = await asOperator('POST', api, gateway(fields));
    assert.equal(ok.statusCode, 201, `${JSON.stringify(fields)}: ${ok.body}`);
  }
});

/** A directory of fake tools that write `<uid>\n<argv…>` to a record file and answer like the real ones. */
function fakeTools(): { dir: string; records: () => { tool: string; uid: number; argv: string[] }[]; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-fake-probes-'));
  const out = join(dir, 'records');
  // The tools may run as any account: the record directory is writable by all.
  mkdirSync(out);
  chmodSync(out, 0o777);
  const answers: Record<string, string> = {
    ping: 'rtt min/avg/max/mdev = 0.100/0.100/0.100/0.000 ms',
    dig: ';; ->>HEADER<<- opcode: QUERY, status: NOERROR, id: 1\\n;; Query time: 1 msec',
    nsupdate: '',
  };
  for (const [tool, answer] of Object.entries(answers)) {
    writeFileSync(join(dir, tool), `#!/bin/sh\nf=$(mktemp -p ${out} ${tool}.XXXXXX)\nid -u > "$f"\nfor a in "$@"; do printf '%s\\n' "$a" >> "$f"; done\nprintf '${answer}\\n'\n`);
    chmodSync(join(dir, tool), 0o755);
  }
  chmodSync(dir, 0o755);
  return {
    dir,
    records: () => readdirSync(out).map((name) => {
      const [uid, ...argv] = readFileSync(join(out, name), 'utf8').split('\n').slice(0, -1);
      return { tool: name.split('.')[0], uid: Number(uid), argv };
    }),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

test('probes: ping, dig and nsupdate run as an unprivileged uid; no request value in their argv is read as an option', { skip: rootSkipReason('running the probe tools as another user') }, async () => {
  const tools = fakeTools();
  const path = process.env.PATH;
  process.env.PATH = `${tools.dir}:${path}`;
  try {
    const base = { interface: 'lo', timeout_ms: 1000, port: null, allow_list: ['127.0.0.1'] };
    // Stored values that predate the grammar (a restored old version) never reach the tools.
    for (const hostile of [
      { ...base, kind: 'dns' as const, target: '127.0.0.1', expect: '-f/etc/shadow' },
      { ...base, kind: 'dns' as const, target: '-f/etc/shadow', expect: 'example.org' },
      { ...base, kind: 'icmp' as const, target: '-f', expect: null },
      { ...base, kind: 'icmp' as const, target: '127.0.0.1', expect: null, interface: '-foo' },
    ]) {
      const refused = await probeGateway(hostile);
      assert.equal(refused.success, false, JSON.stringify(hostile));
      assert.match(refused.error!, /probe refused: (monitor_expect|monitor_target|interface)/, JSON.stringify(hostile));
    }
    assert.deepEqual(tools.records(), [], 'no tool ran for a refused value');

    const dns = await probeGateway({ ...base, kind: 'dns', target: '127.0.0.1', expect: 'example.org' });
    assert.equal(dns.success, true, dns.error ?? '');
    const icmp = await probeGateway({ ...base, kind: 'icmp', target: '127.0.0.1', expect: null });
    assert.equal(icmp.success, true, icmp.error ?? '');
    await sendDnsUpdate('server 127.0.0.1\nsend\n');
    const ran = tools.records();
    assert.deepEqual(ran.map((r) => r.tool).sort(), ['dig', 'nsupdate', 'ping']);
    for (const record of ran) assert.notEqual(record.uid, 0, `${record.tool} ran as root`);
    const dig = ran.find((r) => r.tool === 'dig')!.argv;
    assert.equal(dig[dig.indexOf('example.org') - 1], '-q', `dig's query name is the operand of -q: ${dig.join(' ')}`);
    assert.ok(dig.includes('-r'), 'dig reads no ~/.digrc');
    const ping = ran.find((r) => r.tool === 'ping')!.argv;
    assert.deepEqual(ping.slice(-2), ['--', '127.0.0.1'], `ping's target follows --: ${ping.join(' ')}`);
  } finally {
    process.env.PATH = path;
    tools.cleanup();
  }
});
