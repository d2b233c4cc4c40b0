/**
 * The nftables compile reuses what it made of unchanged data objects (the store never changes one in place): a
 * rule's model object, its lines while the aliases it names resolve to the same objects, its segment. Every
 * recompile of the same data objects under changed surroundings must render what a compile of fresh copies
 * renders: block logging switched, an alias losing or gaining a family, an alias gone, a rule's id reused.
 * The whole rule list is reused too while it is the same array (a snapshot hands one out while no rule changed):
 * the second test changes everything around one list that decides what it becomes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileNftables } from '../src/compile/nftables.js';
import { CompileError } from '../src/compile/firewall-model.js';
import type { FirewallConfig } from '../src/compile/firewall-types.js';
import { alias, config, rule, schedule } from './helpers/firewall-fixtures.js';

/** The same configuration with every data object copied: nothing in it can hit a cache by identity. */
const fresh = (c: FirewallConfig): FirewallConfig => JSON.parse(JSON.stringify(c)) as FirewallConfig;

function assertSameAsFresh(c: FirewallConfig, what: string): string {
  const text = compileNftables(c).text;
  assert.equal(text, compileNftables(fresh(c)).text, what);
  return text;
}

test('recompiling the same data objects renders what fresh copies render, whatever changed around them', () => {
  const web = alias('web', 'network', ['10.1.0.0/24', '2001:db8:1::/48']);
  const rules = Array.from({ length: 80 }, (_, i) => rule({
    action: i % 2 ? 'block' : 'pass', direction: (['in', 'out', 'any'] as const)[i % 3],
    src: i % 4 === 0 ? '<web>' : 'any', dst: i % 5 === 0 ? '<web>' : 'any', dport: 1000 + i,
  }));
  const base = config({ rules, aliases: [web] });
  const first = assertSameAsFresh(base, 'first compile');
  assert.match(first, /ip saddr @alias_web_v4/);
  assert.match(first, /ip6 saddr @alias_web_v6/);

  // Block logging off: the same rule objects, another log decision for block rules.
  const quiet = assertSameAsFresh({ ...base, settings: { block_logging: false } }, 'block logging off');
  assert.ok(first.includes('log prefix "bulwark block') && !quiet.includes('log prefix "bulwark block'), 'block rules stop logging');
  assert.equal(assertSameAsFresh(base, 'block logging on again'), first);

  // The alias loses its IPv6 entries (a new alias object, same rule objects): the v6 variants go.
  const v4only = assertSameAsFresh({ ...base, aliases: [alias('web', 'network', ['10.1.0.0/24'])] }, 'alias without IPv6');
  assert.doesNotMatch(v4only, /ip6 saddr @alias_web_v6/);
  // Another v4-only alias object with other entries: same shape, lines kept, elements changed.
  const moved = assertSameAsFresh({ ...base, aliases: [alias('web', 'network', ['10.2.0.0/24'])] }, 'alias with other entries, same shape');
  assert.match(moved, /10\.2\.0\.0\/24/);
  assert.equal(assertSameAsFresh(base, 'the first alias object again'), first);

  // The alias gone: the rules naming it no longer compile, even though their lines were cached.
  assert.throws(() => compileNftables({ ...base, aliases: [] }), (error: unknown) => error instanceof CompileError && /names alias "web"/.test(String(error)));
  assert.equal(assertSameAsFresh(base, 'alias back'), first);

  // A rule's data object under another id (an import re-keying objects): rendered with the new id.
  const rekeyed = { ...base, rules: base.rules.map((r, i) => (i === 7 ? { id: 'renamed-rule', data: r.data } : r)) };
  assert.match(assertSameAsFresh(rekeyed, 'rule under a new id'), /comment "rule renamed-rule"/);
  // And an id outside the rendered grammar is still refused for an object that passed under its old id.
  assert.throws(() => compileNftables({ ...base, rules: [{ id: 'bad id"', data: base.rules[0].data }] }), CompileError);
});

test('the same rule list under another time, schedule, url table or alias families renders what fresh copies render', () => {
  const office = schedule('sched-office', 'office', '09:00-17:00', 'mon,tue,wed,thu,fri');
  const rules = [
    rule({ action: 'pass', src: '<lan>', dport: 22, schedule_id: 'sched-office' }),
    rule({ action: 'block', dst: '<feed>', dport: 80 }),
    rule({ action: 'pass', src: '<lan>', dst: '<feed>', dport: 443 }),
  ];
  const lan = alias('lan', 'network', ['10.1.0.0/24']);
  const feed = { id: 'alias-feed', data: { name: 'feed', alias_type: 'url_table' as const, entries: ['https://feeds.invalid/list'], description: null, enabled: true } };
  const base = config({ rules, aliases: [lan, feed], schedules: [office], urlTables: { feed: ['192.0.2.0/24'] } });
  const inHours = assertSameAsFresh(base, 'first compile, within the window');
  assert.match(inHours, /tcp dport 22/);

  // The same list at night: the scheduled rule leaves; and back in the window, it returns.
  const night = assertSameAsFresh({ ...base, time: { day: 'wed', minute: 23 * 60 } }, 'outside the window');
  assert.doesNotMatch(night, /tcp dport 22/);
  assert.equal(assertSameAsFresh(base, 'within the window again'), inHours);
  // The schedule edited (another schedules list) so that 10:00 is outside it.
  assert.doesNotMatch(assertSameAsFresh({ ...base, schedules: [schedule('sched-office', 'office', '12:00-13:00', 'mon,tue,wed,thu,fri')] }, 'schedule edited'), /tcp dport 22/);
  // The scheduled rules in force given instead of the time (the ruleset before a schedule edge).
  const before = compileNftables({ ...base, time: { day: 'wed', minute: 23 * 60 } });
  assert.deepEqual([...before.scheduledInForce], []);
  assert.deepEqual([...compileNftables(base).scheduledInForce], [rules[0].id]);

  // The url table's lines gain IPv6 (the alias gains a family): the rules naming it gain their v6 lines.
  const withV6 = assertSameAsFresh({ ...base, urlTables: { feed: ['192.0.2.0/24', '2001:db8:9::/48'] } }, 'url table gains IPv6');
  assert.match(withV6, /ip6 daddr @alias_feed_v6/);
  assert.doesNotMatch(inHours, /ip6 daddr @alias_feed_v6/);
  // Its lines gone: an empty alias set matches nothing, so the rules naming it lose their lines.
  const empty = assertSameAsFresh({ ...base, urlTables: { feed: [] } }, 'url table empty');
  assert.doesNotMatch(empty, /@alias_feed_v4 counter/);
  assert.equal(assertSameAsFresh(base, 'url table as at first'), inHours);

  // The lan alias turned into a port alias: no longer an address alias, so the list no longer compiles.
  assert.throws(() => compileNftables({ ...base, aliases: [alias('lan', 'port', ['22']), feed] }), (error: unknown) => error instanceof CompileError && /names alias "lan"/.test(String(error)));
  // A schedule gone that a rule names: refused although the list compiled before.
  assert.throws(() => compileNftables({ ...base, schedules: [] }), (error: unknown) => error instanceof CompileError && /schedule sched-office does not exist/.test(String(error)));
  assert.equal(assertSameAsFresh(base, 'everything as at first'), inHours);
});
