/**
 * GET /api/v1/rules/analysis and the warnings of rule writes, through the HTTP interface: shadowed (by one rule
 * and by several together), redundant, conflicting, empty aliases, schedules that never fire; and what the
 * analysis must not claim (a rule only partly covered, the "exceptions first" pattern).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adminApi } from './helpers/admin-api.js';
import { config, fixtureId, rule, schedule } from './helpers/firewall-fixtures.js';
import { analyseRules } from '../src/compile/rule-analysis.js';

const api = adminApi();
const { call, created } = api;

const analysis = async (query = '') => {
  const answer = await call('GET', `/api/v1/rules/analysis${query}`);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body;
};
const removeAll = async () => {
  for (const kind of ['rules', 'aliases', 'schedules']) {
    for (const object of (await call('GET', `/api/v1/${kind}`)).body) assert.equal((await call('DELETE', `/api/v1/${kind}/${object.id}`)).status, 204);
  }
};

test('a rule covered by one earlier rule, or by two together, never matches; a partly covered one is not reported', async () => {
  const wide = await created('/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_addr: '10.0.0.0/24', priority: 1 });
  const narrow = await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', dst_addr: '10.0.0.5', dst_port_start: 443, priority: 2 });
  assert.deepEqual(narrow.warnings.map((w: any) => [w.type, w.rule_ids]), [['never_matches', [wide.id]]], 'the write answers the finding');
  // Two halves together cover a rule neither covers alone.
  const low = await created('/api/v1/rules', { action: 'pass', direction: 'any', protocol: 'udp', dst_port_start: 1, dst_port_end: 999, priority: 3 });
  const high = await created('/api/v1/rules', { action: 'block', direction: 'any', protocol: 'udp', dst_port_start: 1000, dst_port_end: 65535, priority: 4 });
  const spanning = await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'udp', dst_port_start: 500, dst_port_end: 2000, priority: 5 });
  // Only partly covered: port 0 is matched by nothing earlier.
  const partial = await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'udp', dst_port_start: 0, dst_port_end: 10, priority: 6 });
  const result = await analysis();
  const never = new Map(result.never_matches.map((n: any) => [n.rule_id, n]));
  assert.deepEqual((never.get(narrow.id) as any)?.shadowed_by, [wide.id]);
  assert.deepEqual(new Set((never.get(spanning.id) as any)?.shadowed_by), new Set([low.id, high.id]));
  assert.equal(never.has(partial.id), false, 'port 0 still reaches it');
  assert.equal(never.has(wide.id), false);
  assert.equal(result.rules, 6);
  await removeAll();
});

test('non-quick rules are judged by last match: an earlier non-quick rule is overridden, not shadowing', async () => {
  const first = await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: 22, quick: false, priority: 1 });
  const last = await created('/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', quick: false, priority: 2 });
  const result = await analysis();
  // The later block-all decides every packet the earlier pass matches: the earlier one never decides.
  assert.deepEqual(result.never_matches.map((n: any) => [n.rule_id, n.shadowed_by]), [[first.id, [last.id]]]);
  await removeAll();
});

test('redundant: removing the rule changes no verdict (a later rule or the default policy decides the same)', async () => {
  const specific = await created('/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_addr: '10.0.0.5', priority: 1 });
  const general = await created('/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_addr: '10.0.0.0/24', priority: 2 });
  const passAny = await created('/api/v1/rules', { action: 'pass', direction: 'out', protocol: 'udp', priority: 3 });
  const result = await analysis();
  const redundant = new Map(result.redundant.map((r: any) => [r.rule_id, r]));
  assert.deepEqual((redundant.get(specific.id) as any)?.covered_by, [general.id]);
  assert.deepEqual((redundant.get(passAny.id) as any)?.covered_by, [], 'the default policy passes what it passes');
  assert.equal(redundant.has(general.id), false, 'without the general block rule its packets would pass');
  await removeAll();
});

test('conflicts: overlapping matches with different actions where neither contains the other; exceptions first are not conflicts', async () => {
  const a = await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', src_addr: '10.0.0.0/24', priority: 1 });
  const b = await created('/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: 22, priority: 2 });
  const exception = await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'udp', src_addr: '192.0.2.1', priority: 3 });
  const blockAll = await created('/api/v1/rules', { action: 'block', direction: 'in', protocol: 'udp', priority: 4 });
  const result = await analysis();
  assert.deepEqual(result.conflicts.map((c: any) => [c.rule_id, c.other_rule_id, c.decides]), [[a.id, b.id, a.id]]);
  assert.ok(!result.conflicts.some((c: any) => c.rule_id === exception.id || c.rule_id === blockAll.id));
  // The write of either side answers the conflict.
  const update = await call('PUT', `/api/v1/rules/${b.id}`, { description: 'ssh' });
  assert.deepEqual(update.body.warnings.map((w: any) => [w.type, w.rule_ids]), [['conflict', [a.id]]]);
  assert.ok(update.headers.etag, 'an update still answers its entity tag');
  await removeAll();
});

test('empty aliases in use and schedules that never fire are reported; writes are never blocked by findings', async () => {
  const empty = await created('/api/v1/aliases', { name: 'nobody', alias_type: 'host', entries: [] });
  const rule = await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', src_addr: '<nobody>' });
  assert.deepEqual(rule.warnings.map((w: any) => w.type), ['never_matches', 'empty_alias']);
  const inverted = await created('/api/v1/rules', { action: 'block', direction: 'out', protocol: 'udp', src_addr: '<nobody>', src_invert: true });
  const result = await analysis();
  assert.deepEqual(result.empty_aliases.map((e: any) => [e.alias, e.rule_ids]), [['nobody', [rule.id, inverted.id]]]);
  assert.deepEqual(result.never_matches.map((n: any) => [n.rule_id, n.reason]), [[rule.id, 'empty_alias']], 'an inverted empty alias matches everything');
  assert.equal(empty.name, 'nobody');
  await removeAll();
});

test('a schedule that never fires (only reachable by an import: the API refuses its days) is reported with its rules', () => {
  const scheduleId = fixtureId(90);
  const silent = config({
    schedules: [schedule(scheduleId, 'holidays', '09:00-17:00', 'funday'), schedule(fixtureId(91), 'office', '09:00-17:00', 'mon')],
    rules: [rule({ id: fixtureId(1), action: 'block', schedule_id: scheduleId }), rule({ id: fixtureId(2), action: 'block', schedule_id: fixtureId(91) })],
  });
  assert.deepEqual(analyseRules(silent).schedules_never_fire.map((s) => [s.schedule_id, s.rule_ids]), [[scheduleId, [fixtureId(1)]]]);
});

test('bad queries are 400s naming the field', async () => {
  for (const query of ['?unused_days=0', '?unused_days=abc', '?other=1']) {
    const answer = await call('GET', `/api/v1/rules/analysis${query}`);
    assert.equal(answer.status, 400, query);
    assert.match(answer.body.error, /querystring\./);
  }
});
