/**
 * The nftables compile reuses what it made of unchanged data objects (the store never changes one in place): a
 * rule's model object, its lines while the aliases it names resolve to the same objects, its segment. Every
 * recompile of the same data objects under changed surroundings must render what a compile of fresh copies
 * renders: block logging switched, an alias losing or gaining a family, an alias gone, a rule's id reused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileNftables } from '../src/compile/nftables.js';
import { CompileError } from '../src/compile/firewall-model.js';
import type { FirewallConfig } from '../src/compile/firewall-types.js';
import { alias, config, rule } from './helpers/firewall-fixtures.js';

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
