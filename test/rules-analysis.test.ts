/**
 * GET /api/v1/rules/analysis and the warnings of rule writes, through the HTTP interface: shadowed (by one rule
 * and by several together), redundant, conflicting, empty aliases, schedules that never fire; and what the
 * analysis must not claim (a rule only partly covered, the "exceptions first" pattern).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adminApi } from './helpers/admin-api.js';
import { alias, config, fixtureId, rule, schedule } from './helpers/firewall-fixtures.js';
import { analyseRules } from '../src/compile/rule-analysis.js';
import { buildModel } from '../src/compile/firewall-model.js';
import { decide } from '../src/compile/firewall-decision.js';

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

/** A small seeded generator (mulberry32), so a failing seed can be replayed. */
function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32;
  };
  return { int: (low: number, high: number) => low + Math.floor(next() * (high - low + 1)), pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)], chance: (p: number) => next() < p };
}

function randomConfig(seed: number) {
  const random = generator(seed);
  const addresses = ['any', 'any', '10.0.0.0/24', '10.0.0.0/25', '10.0.0.128/25', '10.0.0.7', '10.0.0.5-10.0.0.40', '<hosts>', '<empty>'];
  const rules = Array.from({ length: 24 }, (_, i) => {
    const protocol = random.pick(['tcp', 'udp', 'tcp/udp', 'any'] as const);
    const ported = protocol !== 'any';
    const start = random.int(1, 30);
    return rule({
      id: fixtureId(1000 + i), priority: i,
      action: random.pick(['pass', 'block', 'blockdrop'] as const), direction: random.pick(['in', 'out', 'any'] as const),
      interface: random.pick([null, null, 'eth0', 'eth1']), protocol, quick: random.chance(0.6),
      src: random.pick(addresses), dst: random.pick(addresses), src_invert: false, dst_invert: false,
      ...(ported && random.chance(0.6) ? { dport: [start, start + random.int(0, 20)] as [number, number] } : {}),
    });
  });
  return config({ rules, aliases: [alias('hosts', 'host', ['10.0.0.7', '10.0.0.9', '10.0.0.200']), alias('empty', 'host', [])] });
}

const PACKETS = 4000;

test('property: what the analysis claims holds for the decision function on random packets, and one rule\'s findings equal the full analysis\'', () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    const base = randomConfig(seed);
    const full = analyseRules(base);
    const model = buildModel(base);
    const random = generator(seed * 7919);
    const host = { loopback: 'lo', byInterface: new Map<string, string[]>() };
    const packets = Array.from({ length: PACKETS }, () => ({
      direction: random.pick(['in', 'out'] as const), iface: random.pick(['eth0', 'eth1', 'eth2']), protocol: random.pick(['tcp', 'udp', 'icmp']),
      src: `10.0.0.${random.int(0, 255)}`, dst: `10.0.0.${random.int(0, 255)}`, sport: random.int(0, 40), dport: random.int(0, 40),
    }));
    const decisions = packets.map((packet) => decide(model, model.rules, packet, host));
    for (const never of full.never_matches) {
      assert.ok(!decisions.some((d) => d.rule === never.rule_id), `seed ${seed}: ${never.rule_id} never matches, yet decided a packet`);
    }
    for (const redundant of full.redundant) {
      const without = buildModel({ ...base, rules: base.rules.filter((r) => r.id !== redundant.rule_id) });
      packets.forEach((packet, i) => {
        const kept = decisions[i].rule === undefined ? 'pass' : base.rules.find((r) => r.id === decisions[i].rule)!.data.action;
        const after = decide(without, without.rules, packet, host);
        const gone = after.rule === undefined ? 'pass' : base.rules.find((r) => r.id === after.rule)!.data.action;
        assert.equal(gone, kept, `seed ${seed}: removing redundant ${redundant.rule_id} changed the action for ${JSON.stringify(packet)}`);
      });
    }
    for (const { id } of base.rules) {
      const one = analyseRules(base, { only: id });
      // One rule's analysis does not judge its partners: a conflict with a rule the full analysis finds never
      // matching (and so reports as that instead) may be named too.
      const neverMatching = new Set(full.never_matches.map((n) => n.rule_id));
      const pick = (analysis: typeof full) => ({
        never: analysis.never_matches.filter((n) => n.rule_id === id).map((n) => n.reason).sort(),
        redundant: analysis.redundant.filter((r) => r.rule_id === id).length,
        conflicts: analysis.conflicts
          .filter((c) => (c.rule_id === id || c.other_rule_id === id) && !neverMatching.has(c.rule_id) && !neverMatching.has(c.other_rule_id))
          .map((c) => `${c.rule_id}/${c.other_rule_id}`).sort(),
      });
      assert.deepEqual(pick(one), pick(full), `seed ${seed}, rule ${id}`);
    }
    assert.ok(full.never_matches.length + full.redundant.length + full.conflicts.length > 0, `seed ${seed} found nothing to check`);
  }
});
