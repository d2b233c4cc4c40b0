import { test } from 'node:test';
import assert from 'node:assert/strict';
import { json } from './helpers/app.js';
import { adminApi } from './helpers/admin-api.js';

/**
 * Every port field of the API takes 443, "443", "8000-8080" (or "8000:8080") and {start, end}; it is stored
 * and answered in its collection's canonical shape, and a refusal names the field exactly as the client sent it.
 */
const api = adminApi();
const { call, created } = api;
const { refused } = api;

const DEFAULT_INSTANCE = '61696677-0000-0000-0000-000000000000';

/** Each accepted form and the range it means. */
const FORMS: [unknown, { start: number; end: number } | null][] = [
  [443, { start: 443, end: 443 }],
  ['443', { start: 443, end: 443 }],
  [' 443 ', { start: 443, end: 443 }],
  ['8000-8080', { start: 8000, end: 8080 }],
  ['8000:8080', { start: 8000, end: 8080 }],
  [{ start: 8000, end: 8080 }, { start: 8000, end: 8080 }],
  [0, { start: 0, end: 0 }],
  ['65535', { start: 65535, end: 65535 }],
  ['', null],
  [null, null],
];
const SINGLE_FORMS = FORMS.filter(([, range]) => range === null || range.start === range.end);
const token = (range: { start: number; end: number } | null) => (range === null ? null : range.start === range.end ? String(range.start) : `${range.start}:${range.end}`);

/** Where a port field lives: how to create a record carrying `value` in it, and how to read it back. */
interface PortField {
  name: string;
  url: string;
  create(value: unknown): Record<string, unknown>;
  update(value: unknown): Record<string, unknown>;
  read(record: Record<string, any>): unknown;
  /** The stored and answered shape of a range. */
  canonical(range: { start: number; end: number } | null): unknown;
  forms: typeof FORMS;
}

const rule = (match: Record<string, unknown>) => ({ action: 'pass', direction: 'in', protocol: 'tcp', rule_match: match });
const dnat = (extra: Record<string, unknown>) => ({ nat_type: 'dnat', interface: 'em0', protocol: 'tcp', redirect_addr: '10.0.0.5', ...extra });
const policy = (extra: Record<string, unknown>) => ({ priority: 100, name: `p-${Math.random().toString(36).slice(2, 10)}`, action_kind: 'set_instance', target_id: DEFAULT_INSTANCE, protocol: 'tcp', ...extra });
const leak = (ports: unknown) => ({ name: `l-${Math.random().toString(36).slice(2, 10)}`, src_instance_id: DEFAULT_INSTANCE, dst_instance_id: DEFAULT_INSTANCE, prefix: 'any', protocol: 'tcp', ports });
const asRange = (range: { start: number; end: number } | null) => range;

const FIELDS: PortField[] = [
  { name: 'rule rule_match.src_port', url: '/api/v1/rules', create: (v) => rule({ src_port: v }), update: (v) => ({ rule_match: { src_port: v } }), read: (r) => r.rule_match.src_port, canonical: asRange, forms: FORMS },
  { name: 'rule rule_match.dst_port', url: '/api/v1/rules', create: (v) => rule({ dst_port: v }), update: (v) => ({ rule_match: { dst_port: v } }), read: (r) => r.rule_match.dst_port, canonical: asRange, forms: FORMS },
  // a dnat rule needs a destination or a redirect port; the other one carries the form under test
  { name: 'NAT src_port', url: '/api/v1/nat', create: (v) => dnat({ dst_port_start: 80, src_port: v }), update: (v) => ({ src_port: v }), read: (r) => r.src_port, canonical: asRange, forms: FORMS },
  { name: 'NAT dst_port', url: '/api/v1/nat', create: (v) => dnat({ redirect: { port: 8080 }, dst_port: v }), update: (v) => ({ dst_port: v }), read: (r) => r.dst_port, canonical: asRange, forms: FORMS },
  { name: 'NAT redirect.port', url: '/api/v1/nat', create: (v) => dnat({ dst_port_start: 80, redirect: { port: v } }), update: (v) => ({ redirect: { port: v } }), read: (r) => r.redirect.port, canonical: asRange, forms: SINGLE_FORMS },
  { name: 'multi-WAN policy src_port', url: '/api/v1/multiwan/policies', create: (v) => policy({ src_port: v }), update: (v) => ({ src_port: v }), read: (r) => r.src_port, canonical: token, forms: FORMS },
  { name: 'multi-WAN policy dst_port', url: '/api/v1/multiwan/policies', create: (v) => policy({ dst_port: v }), update: (v) => ({ dst_port: v }), read: (r) => r.dst_port, canonical: token, forms: FORMS },
  { name: 'multi-WAN leak ports', url: '/api/v1/multiwan/leaks', create: (v) => leak(v), update: () => ({}), read: (r) => r.ports, canonical: token, forms: FORMS },
];

test('every port field takes every form, stores the canonical shape and answers it on create, read and list', async () => {
  for (const field of FIELDS) {
    for (const [value, range] of field.forms) {
      const record = await created(field.url, field.create(value));
      const expected = field.canonical(range);
      assert.deepEqual(field.read(record), expected, `${field.name} = ${JSON.stringify(value)} (create answer)`);
      const listed = (await call('GET', field.url)).body.find((r: { id: string }) => r.id === record.id);
      assert.deepEqual(field.read(listed), expected, `${field.name} = ${JSON.stringify(value)} (list)`);
    }
  }
});

test('a PUT takes every form too, and answers and keeps the canonical shape', async () => {
  for (const field of FIELDS.filter((f) => f.name !== 'multi-WAN leak ports')) {
    const record = await created(field.url, field.create(7));
    for (const [value, range] of field.forms) {
      const updated = await call('PUT', `${field.url}/${record.id}`, field.update(value));
      assert.equal(updated.status, 200, `${field.name} = ${JSON.stringify(value)}: ${JSON.stringify(updated.body)}`);
      assert.deepEqual(field.read(updated.body), field.canonical(range), `${field.name} = ${JSON.stringify(value)} (PUT answer)`);
      assert.deepEqual(field.read((await call('GET', `${field.url}/${record.id}`)).body), field.canonical(range), `${field.name} (read back)`);
    }
  }
});

test('a bad port is a 400 naming the field as the client sent it and quoting the value', async () => {
  const cases: [unknown, RegExp][] = [
    ['9000-80', /^body\.rule_match\.dst_port: "9000-80" is not a valid port range \(start > end\)$/],
    [{ start: 9000, end: 80 }, /^body\.rule_match\.dst_port: \{"start":9000,"end":80\} is not a valid port range \(start > end\)$/],
    ['70000', /^body\.rule_match\.dst_port: "70000" is not a valid port \(ports are whole numbers 0-65535\)$/],
    ['80-70000', /^body\.rule_match\.dst_port: "80-70000" is not a valid port range \(ports are whole numbers 0-65535\)$/],
    [70000, /^body\.rule_match\.dst_port must be <= 65535$/],
    [-1, /^body\.rule_match\.dst_port must be >= 0$/],
    ['http', /^body\.rule_match\.dst_port: "http" is not a port or a port range \(write 443, "443", "8000-8080" or/],
    ['80,443', /^body\.rule_match\.dst_port: "80,443" is not a port or a port range/],
    ['1-2-3', /^body\.rule_match\.dst_port: "1-2-3" is not a port or a port range/],
    ['0x50', /^body\.rule_match\.dst_port: "0x50" is not a port or a port range/],
    [true, /^body\.rule_match\.dst_port must be integer, string, object or null$/],
    [44.5, /^body\.rule_match\.dst_port must be integer, string, object or null$/],
    [[80], /^body\.rule_match\.dst_port must be integer, string, object or null$/],
    [{ start: 80 }, /^body\.rule_match\.dst_port\.end is required$/],
    [{ start: 80, end: 90, step: 2 }, /^body\.rule_match\.dst_port\.step is not a known field$/],
    ['1'.repeat(17), /^body\.rule_match\.dst_port must NOT have more than 16 characters$/],
  ];
  for (const [value, message] of cases) {
    const error = await refused('POST', '/api/v1/rules', rule({ dst_port: value }), message);
    assert.ok(!error.includes('dst_port_start'), error);
  }
  await refused('POST', '/api/v1/nat', dnat({ dst_port: '443-80' }), /^body\.dst_port: "443-80" is not a valid port range \(start > end\)$/);
  await refused('POST', '/api/v1/nat', dnat({ dst_port_start: 80, redirect: { port: 'eighty' } }), /^body\.redirect\.port: "eighty" is not a port/);
  await refused('POST', '/api/v1/multiwan/policies', policy({ dst_port: '9000-80' }), /^body\.dst_port: "9000-80" is not a valid port range \(start > end\)$/);
  await refused('POST', '/api/v1/multiwan/policies', policy({ src_port: '99999' }), /^body\.src_port: "99999" is not a valid port/);
  await refused('POST', '/api/v1/multiwan/policies', policy({ src_port: false }), /^body\.src_port must be integer, string, object or null$/);
  await refused('POST', '/api/v1/multiwan/leaks', leak('53-'), /^body\.ports: "53-" is not a port or a port range/);
  // The flat request fields keep their own names.
  await refused('POST', '/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: 90, dst_port_end: 80 }, /^body\.dst_port_start must not be greater than dst_port_end$/);
});

test('a refusal across fields names the port field the client used, never an internal name', async () => {
  const nested = await refused('POST', '/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'icmp', rule_match: { dst_port: '443' } }, /^body\.rule_match\.dst_port: ports need protocol tcp, udp or tcp\/udp \(protocol is icmp\)$/);
  assert.ok(!nested.includes('dst_port_start'));
  await refused('POST', '/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'icmp', dst_port_start: 443 }, /^body\.dst_port_start: ports need protocol/);
  await refused('POST', '/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'gre', rule_match: { src_port: 1024 } }, /^body\.rule_match\.src_port: ports need protocol/);
  // ports stored earlier, a protocol sent now: the protocol is what the client changed
  const stored = await created('/api/v1/rules', rule({ dst_port: 443 }));
  await refused('PUT', `/api/v1/rules/${stored.id}`, { protocol: 'icmp' }, /^body\.protocol: icmp cannot match ports and the rule has rule_match\.dst_port; clear it \(null\)/);
  const cleared = await call('PUT', `/api/v1/rules/${stored.id}`, { protocol: 'icmp', rule_match: { dst_port: '' } });
  assert.equal(cleared.status, 200, JSON.stringify(cleared.body));
  assert.equal(cleared.body.rule_match.dst_port, null);

  await refused('POST', '/api/v1/nat', dnat({ redirect: { port: '5000-5010' } }), /^body\.redirect\.port: the redirect port must be a single port/);
  await refused('POST', '/api/v1/nat', dnat({ redirect_port_start: 5000, redirect_port_end: 5010 }), /^body\.redirect_port_end: the redirect port must be a single port/);
  await refused('POST', '/api/v1/nat', dnat({ protocol: 'icmp', dst_port: 80 }), /^body\.dst_port: ports need protocol tcp, udp or tcp\/udp \(protocol is icmp\)$/);
  await refused('POST', '/api/v1/nat', { nat_type: 'masquerade', interface: 'em0', protocol: 'tcp', redirect: { port: 80 } }, /^body\.redirect\.port: masquerade takes no redirect port$/);
  await refused('POST', '/api/v1/nat', { nat_type: 'binat', interface: 'em0', protocol: 'tcp', src_addr: '10.0.0.9', redirect_addr: '203.0.113.9', src_port: '22' }, /^body\.src_port: binat maps whole addresses/);
  await refused('POST', '/api/v1/nat', dnat({}), /^body\.dst_port_start: a dnat rule needs a destination port or a redirect port$/);
  await refused('POST', '/api/v1/nat', dnat({ redirect: { address: '10.0.0.0/24' }, redirect_addr: undefined, dst_port: 80 }), /^body\.redirect\.address must be a single IPv4 or IPv6 address for dnat$/);
});

test('the OpenAPI document shows the port forms', async () => {
  const document = json(await api.t.app.inject({ url: '/api/v1/openapi.json' }));
  const ruleBody = document.paths['/api/v1/rules'].post.requestBody.content['application/json'].schema;
  const dstPort = ruleBody.properties.rule_match.properties.dst_port;
  assert.deepEqual(dstPort.anyOf.map((s: { type: string }) => s.type), ['integer', 'string', 'object', 'null']);
  assert.match(dstPort.description, /"8000-8080"/);
  const policyBody = document.paths['/api/v1/multiwan/policies'].post.requestBody.content['application/json'].schema;
  assert.deepEqual(policyBody.properties.src_port.anyOf.map((s: { type: string }) => s.type), ['integer', 'string', 'object', 'null']);
  // records answer the canonical shape only
  const ruleRecord = document.paths['/api/v1/rules/{id}'].get.responses['200'].content['application/json'].schema;
  assert.deepEqual(ruleRecord.properties.rule_match.properties.dst_port.anyOf.map((s: { type: string }) => s.type), ['object', 'null']);
});

test('a multi-WAN preview takes the same port forms as a policy and refuses bad ones the same way', async () => {
  const proposed = { priority: 1, name: 'web', action_kind: 'set_instance', target_id: DEFAULT_INSTANCE, protocol: 'tcp', iface_in: 'eth0' };
  const preview = await call('POST', '/api/v1/multiwan/preview', { policies: [{ ...proposed, dst_port: '8000-8080' }] });
  assert.equal(preview.status, 200, JSON.stringify(preview.body));
  assert.ok(preview.body.new_rules.some((line: string) => line.includes(' port 8000:8080 ')), JSON.stringify(preview.body.new_rules));
  await refused('POST', '/api/v1/multiwan/preview', { policies: [{ ...proposed, dst_port: '9000-80' }] }, /^body\.policies\.0\.dst_port: "9000-80" is not a valid port range \(start > end\)$/);
});
