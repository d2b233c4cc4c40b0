/**
 * No request value becomes pf or nftables text: every string field of rules, aliases, schedules and NAT
 * (enumerated from the stored-record schemas, so a new field cannot be forgotten) is written through the API
 * with hostile values. Each write must either be refused with a 400 naming the field, or leave the compiled
 * ruleset with exactly the rules of a benign configuration: the same non-comment lines as pfctl and nft read
 * them (pfctl joins a line ending in `\`), the same number of lines, no CR or NUL anywhere.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { json } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';
import type { Headers } from '../helpers/auth.js';
import { pfLogicalLines } from '../helpers/ruleset-eval.js';
import { AliasSchema, NatSchema, RuleSchema, ScheduleSchema } from '../../src/compile/firewall-schemas.js';
import { packetFilterOf } from '../helpers/areas.js';

const HOSTILE = [
  'a"b', "a'b", 'a\nb', 'a\rb', 'a\r\nb', 'a\0b', 'x\npass quick all', 'x\n}\ntable inet evil {', '{ }', 'a { b } c',
  'a; pass all', 'a;\nblock all', 'ends in a backslash \\', '\\', '# comment', 'include "/etc/passwd"', 'include /etc/pf.conf',
  'a\u2028b', '\u202eevil', 'tab\there', '$macro', '`cmd`', '<all>', '-x', 'all', 'a\\\nblock drop all',
];

/** Every string-typed leaf of a TypeBox/JSON schema, as dotted paths (`entries[]` for array items). */
function stringFields(schema: any, prefix = ''): string[] {
  if (schema.anyOf) return [...new Set(schema.anyOf.flatMap((s: any) => stringFields(s, prefix)))] as string[];
  if (schema.type === 'string') return [prefix];
  if (schema.type === 'array') return stringFields(schema.items, `${prefix}[]`);
  if (schema.type === 'object' && schema.properties) {
    return Object.entries(schema.properties).flatMap(([key, value]) => stringFields(value, prefix ? `${prefix}.${key}` : key));
  }
  return [];
}

type Kind = 'rules' | 'aliases' | 'schedules' | 'nat';
/** How one stored field is written in a request (the record form, which PUT accepts as read back). */
const EXERCISED: Record<Kind, Record<string, (value: string) => Record<string, unknown>>> = {
  rules: {
    action: (v) => ({ action: v }), direction: (v) => ({ direction: v }), ip_version: (v) => ({ ip_version: v }),
    interface: (v) => ({ interface: v }), protocol: (v) => ({ protocol: v }),
    'rule_match.src_addr': (v) => ({ rule_match: { src_addr: v } }), 'rule_match.dst_addr': (v) => ({ rule_match: { dst_addr: v } }),
    label: (v) => ({ label: v }), description: (v) => ({ description: v }), gateway: (v) => ({ gateway: v }),
    status: (v) => ({ status: v }), schedule_id: (v) => ({ schedule_id: v }),
    'state_options.tracking': (v) => ({ state_options: { tracking: v } }), 'state_options.policy': (v) => ({ state_options: { policy: v } }),
  },
  aliases: {
    name: (v) => ({ name: v }), alias_type: (v) => ({ alias_type: v }), 'entries[]': (v) => ({ entries: [v] }),
  },
  schedules: {
    name: (v) => ({ name: v }), time_ranges: (v) => ({ time_ranges: v }), days_of_week: (v) => ({ days_of_week: v }),
  },
  nat: {
    nat_type: (v) => ({ nat_type: v }), interface: (v) => ({ interface: v }), protocol: (v) => ({ protocol: v }),
    src_addr: (v) => ({ src_addr: v }), dst_addr: (v) => ({ dst_addr: v }), 'redirect.address': (v) => ({ redirect: { address: v } }),
    label: (v) => ({ label: v }), status: (v) => ({ status: v }),
  },
};
/** Stored but never rendered into pf or nftables text, with the reason. */
const NOT_RENDERED: Record<Kind, Record<string, string>> = {
  rules: {},
  aliases: { description: 'shown to API clients only; compilers never read it' },
  schedules: { description: 'shown to API clients only; compilers never read it' },
  nat: {},
};
const SCHEMAS: Record<Kind, unknown> = { rules: RuleSchema, aliases: AliasSchema, schedules: ScheduleSchema, nat: NatSchema };

let t: AreaApp;
let headers: Headers;
const targets = {} as Record<Kind, { id: string; record: Record<string, unknown> }>;
const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) => {
  const response = await t.app.inject({ method, url, payload: payload as object, headers });
  return { status: response.statusCode, body: response.body ? json(response) : undefined };
};
const create = async (url: string, payload: unknown) => {
  const response = await call('POST', url, payload);
  assert.equal(response.status, 201, `${url}: ${JSON.stringify(response.body)}`);
  return response.body;
};

before(async () => {
  t = await startAreaApp();
  headers = t.headers;
  t.clock.set(new Date(2026, 0, 7, 3, 0).getTime()); // Wednesday 03:00 local: outside the schedule below
  await create('/api/v1/aliases', { name: 'inuse', alias_type: 'network', entries: ['10.0.0.0/24'] });
  const spare = await create('/api/v1/aliases', { name: 'spare', alias_type: 'host', entries: ['192.0.2.1'] });
  const schedule = await create('/api/v1/schedules', { name: 'office', time_ranges: '09:00-17:00' });
  // The scheduled rule is outside its window, so the schedule's name is rendered ("not loaded" comment).
  await create('/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: 81, schedule_id: schedule.id });
  const rule = await create('/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_addr: '<inuse>', dst_port_start: 80, label: 'web', description: 'benign' });
  const nat = await create('/api/v1/nat', { nat_type: 'snat', interface: 'em0', protocol: 'tcp', src_addr: '10.0.0.0/24', redirect_addr: '203.0.113.5', label: 'out' });
  targets.rules = { id: rule.id, record: rule };
  targets.aliases = { id: spare.id, record: spare };
  targets.schedules = { id: schedule.id, record: schedule };
  targets.nat = { id: nat.id, record: nat };
});
after(() => t.close());

/** The structure pfctl and nft read: non-comment logical lines, and the total number of lines. */
function structure(text: string, dialect: 'pf' | 'nftables') {
  const lines = dialect === 'pf' ? pfLogicalLines(text) : text.split('\n');
  return { rules: lines.map((l) => l.trim()).filter((l) => l && !l.startsWith('#')), lineCount: lines.length };
}
function compiled() {
  const service = packetFilterOf(t.app);
  const snapshot = service.storedSnapshot();
  return { pf: service.compile(snapshot, 'pf').text, nftables: service.compile(snapshot, 'nftables').text };
}

test('every string field of the stored records is either exercised or listed as not rendered', () => {
  for (const kind of Object.keys(SCHEMAS) as Kind[]) {
    const fields = stringFields(SCHEMAS[kind]).sort();
    const covered = [...Object.keys(EXERCISED[kind]), ...Object.keys(NOT_RENDERED[kind])].sort();
    assert.deepEqual(fields, covered, `${kind}: a string field is neither exercised nor listed as not rendered`);
  }
});

test('hostile strings in every rendered field: 400 naming the field, or exactly the intended ruleset', async () => {
  const baseline = compiled();
  const expected = { pf: structure(baseline.pf, 'pf'), nftables: structure(baseline.nftables, 'nftables') };
  // The benign configuration renders every exercised free-text field somewhere.
  assert.match(baseline.pf, /label: web \| benign/);
  assert.match(baseline.pf, /not loaded: outside schedule "office"/);
  assert.match(baseline.nftables, /not loaded: outside schedule "office"/);
  let accepted = 0;
  let refused = 0;
  for (const kind of Object.keys(EXERCISED) as Kind[]) {
    const { id, record } = targets[kind];
    for (const [field, body] of Object.entries(EXERCISED[kind])) {
      for (const value of HOSTILE) {
        const what = `${kind}.${field} = ${JSON.stringify(value)}`;
        const response = await call('PUT', `/api/v1/${kind}/${id}`, body(value));
        if (response.status === 400) {
          const leaf = field.replace('[]', '').split('.').pop()!;
          assert.match(response.body.error, new RegExp(leaf), `${what}: the 400 names the field: ${response.body.error}`);
          refused++;
          continue;
        }
        assert.equal(response.status, 200, `${what}: ${JSON.stringify(response.body)}`);
        accepted++;
        const text = compiled();
        for (const dialect of ['pf', 'nftables'] as const) {
          assert.doesNotMatch(text[dialect], /[\r\0]/, `${what}: ${dialect} text holds CR or NUL`);
          assert.deepEqual(structure(text[dialect], dialect), expected[dialect], `${what}: the ${dialect} ruleset changed`);
        }
        const restored = await call('PUT', `/api/v1/${kind}/${id}`, { ...record, updated_at: undefined });
        assert.equal(restored.status, 200, `${what}: restore: ${JSON.stringify(restored.body)}`);
      }
    }
  }
  const final = compiled();
  assert.equal(final.pf, baseline.pf, 'every accepted value was restored');
  // Both outcomes occur: free text is accepted (and encoded), names and addresses are refused.
  assert.ok(accepted > 0 && refused > 0, `accepted ${accepted}, refused ${refused}`);
});
