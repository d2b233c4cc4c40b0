import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nftDelta } from '../src/compile/nft-delta.js';
import { renderFullLoad, type NftTable } from '../src/compile/nft-table.js';
import { canonicalNftState, parseNftTableObjects } from '../src/platform/linux/nft-listing.js';

const base = (extra: Partial<NftTable> = {}): NftTable => ({
  sets: [{ name: 'alias_web_v4', declaration: ['type ipv4_addr', 'flags interval'], elements: ['10.0.0.0/24', '10.0.1.0/24'] }],
  chains: [
    { name: 'filter_in', base: 'type filter hook prerouting priority dstnat + 10; policy accept;', rules: ['iifname "lo" accept', 'jump in_a'] },
    { name: 'in_a', rules: ['tcp dport 22 counter accept comment "rule a"'] },
  ],
  ...extra,
});

test('a delta touches only what differs, in an order the kernel accepts in one transaction', () => {
  const unchanged = { name: 'alias_ssh_v4', declaration: ['type ipv4_addr', 'flags interval'], elements: ['10.7.0.0/16'] };
  const before = base({ sets: [...base().sets, unchanged] });
  const after = base({
    sets: [
      { name: 'alias_web_v4', declaration: ['type ipv4_addr', 'flags interval'], elements: ['10.0.0.0/24', '10.0.2.0/24'] },
      unchanged,
      { name: 'alias_db_v4', declaration: ['type ipv4_addr', 'flags interval'], elements: ['10.9.0.1'] },
    ],
    chains: [
      { name: 'filter_in', base: before.chains[0].base, rules: ['iifname "lo" accept', 'jump in_b'] },
      { name: 'in_b', rules: ['ip saddr @alias_db_v4 counter drop comment "rule b"', 'ip saddr @alias_ssh_v4 ip daddr @alias_web_v4 tcp dport 22 accept comment "mail @alias_ssh_v4"'] },
    ],
  });
  const delta = nftDelta(before, after)!;
  assert.deepEqual(delta.script.trim().split('\n'), [
    // lost an element: filled again whole; elements only ever by `add set` with the declaration (no cache read)
    'flush set inet bulwark alias_web_v4',
    'add set inet bulwark alias_web_v4 { type ipv4_addr; flags interval; elements = { 10.0.0.0/24, 10.0.2.0/24 }; }',
    'add set inet bulwark alias_db_v4 { type ipv4_addr; flags interval; elements = { 10.9.0.1 }; }',
    // named by a new rule but unchanged: declared alone (its elements stay), once, so nft reads no declarations
    'add set inet bulwark alias_ssh_v4 { type ipv4_addr; flags interval; }',
    'flush chain inet bulwark filter_in',
    // chains declared with their rules, a regular one before the base chain that jumps to it
    'add chain inet bulwark in_b { ip saddr @alias_db_v4 counter drop comment "rule b"; ip saddr @alias_ssh_v4 ip daddr @alias_web_v4 tcp dport 22 accept comment "mail @alias_ssh_v4"; }',
    'add chain inet bulwark filter_in { type filter hook prerouting priority dstnat + 10; policy accept; iifname "lo" accept; jump in_b; }',
    // only once nothing jumps to it any more
    'flush chain inet bulwark in_a',
    'delete chain inet bulwark in_a',
  ]);
  assert.deepEqual(delta.touched, ['set alias_web_v4', 'set alias_db_v4', 'chain in_b', 'chain filter_in', 'chain in_a'], 'what the read-back after it lists');
  assert.equal(nftDelta(before, before)!.script, '', 'nothing changed: nothing to load');
  assert.deepEqual(nftDelta(before, before)!.touched, []);
});

test('a set that only gains elements gets just those, by an add set that declares it', () => {
  const before = base();
  const after = base({ sets: [{ ...before.sets[0], elements: [...before.sets[0].elements, '192.0.2.1'] }] });
  assert.deepEqual(nftDelta(before, after)!.script.trim().split('\n'), [
    'add set inet bulwark alias_web_v4 { type ipv4_addr; flags interval; elements = { 192.0.2.1 }; }',
  ]);
  assert.deepEqual(nftDelta(before, after)!.changed, { chains: 0, sets: 1, ruleLines: 0, elements: 1 });
});

test('a large set edited in a few places: the gained elements wherever they are; a loss anywhere refills it; a swap is no change', () => {
  const elements = Array.from({ length: 3000 }, (_, i) => `10.${i >> 8}.${i & 255}.0/25`);
  // Beside a set that stays as it is, so refilling this one is still a small share of the table.
  const other = { name: 'alias_other_v4', declaration: ['type ipv4_addr', 'flags interval'], elements: Array.from({ length: 20_000 }, (_, i) => `172.16.${i >> 8}.${i & 255}`) };
  const set = (list: string[]) => base({ sets: [{ ...base().sets[0], elements: list }, other] });
  const before = set(elements);
  const gained = (list: string[]) => {
    const delta = nftDelta(before, set(list))!;
    const line = delta.script.split('\n').find((l) => l.includes('elements = '));
    return { flushed: delta.script.includes('flush set'), elements: line?.replace(/^.*elements = \{ (.*) \}; \}$/, '$1').split(', '), count: delta.changed.elements };
  };
  const withInserted = [...elements.slice(0, 1500), '192.0.2.1', '192.0.2.9', ...elements.slice(1500)];
  assert.deepEqual(gained(withInserted), { flushed: false, elements: ['192.0.2.1', '192.0.2.9'], count: 2 });
  assert.deepEqual(gained(['192.0.2.1', ...elements]), { flushed: false, elements: ['192.0.2.1'], count: 1 });
  assert.deepEqual(gained([...elements, '192.0.2.1']), { flushed: false, elements: ['192.0.2.1'], count: 1 });
  // One element gone from the middle, or replaced by another: the set is filled again whole.
  const lost = gained([...elements.slice(0, 1000), ...elements.slice(1001)]);
  assert.deepEqual([lost.flushed, lost.elements?.length, lost.count], [true, 2999, 2999 + 3000]);
  const replaced = gained([...elements.slice(0, 1000), '192.0.2.1', ...elements.slice(1001)]);
  assert.deepEqual([replaced.flushed, replaced.elements?.length], [true, 3000]);
  // Two elements trading places are the same set: nothing to load for it.
  const swapped = [...elements];
  [swapped[10], swapped[2000]] = [swapped[2000], swapped[10]];
  assert.equal(nftDelta(before, set(swapped))!.script, '');
});

test('no delta when the skeleton changes: a base chain hook or a set type', () => {
  const before = base();
  assert.equal(nftDelta(before, base({ chains: [{ ...before.chains[0], base: 'type filter hook input priority 0; policy accept;' }, before.chains[1]] })), undefined);
  assert.equal(nftDelta(before, base({ sets: [{ ...before.sets[0], declaration: ['type ipv6_addr', 'flags interval'] }] })), undefined);
});

test('the canonical listing ignores object order and element layout, and keeps rule order', () => {
  const listing = (first: string, second: string) => `table inet bulwark {\n${first}\n${second}\n}\n`;
  const set = '\tset s {\n\t\ttype ipv4_addr\n\t\tflags interval\n\t\telements = { 10.0.1.0/24,\n\t\t\t     10.0.0.0/24 }\n\t}';
  const setOtherLayout = '\tset s {\n\t\ttype ipv4_addr\n\t\tflags interval\n\t\telements = { 10.0.0.0/24, 10.0.1.0/24 }\n\t}';
  const chain = '\tchain c {\n\t\ttcp dport 1 accept\n\t\ttcp dport 2 drop\n\t}';
  const swapped = '\tchain c {\n\t\ttcp dport 2 drop\n\t\ttcp dport 1 accept\n\t}';
  assert.equal(canonicalNftState(listing(set, chain)).fingerprint, canonicalNftState(listing(chain, setOtherLayout)).fingerprint);
  assert.notEqual(canonicalNftState(listing(set, chain)).fingerprint, canonicalNftState(listing(set, swapped)).fingerprint);
  assert.deepEqual(Object.keys(canonicalNftState(listing(set, chain)).objects), ['chain c', 'set s']);
  assert.equal(canonicalNftState(listing(set, chain)).objects['set s'].size, 2);
});

test('counter objects: a delta adds those of new rules first and leaves the others (and what they counted)', () => {
  const before = base({ counters: ['traffic_in', 'rule_a', 'rule_b'] });
  const after = base({
    counters: ['traffic_in', 'rule_a', 'rule_c'],
    chains: [before.chains[0], { name: 'in_a', rules: ['tcp dport 22 counter name "rule_a" accept comment "rule a"', 'tcp dport 25 counter name "rule_c" accept comment "rule c"'] }],
  });
  const delta = nftDelta(before, after)!;
  assert.deepEqual(delta.script.trim().split('\n'), [
    'add counter inet bulwark rule_c',
    'flush chain inet bulwark in_a',
    'add chain inet bulwark in_a { tcp dport 22 counter name "rule_a" accept comment "rule a"; tcp dport 25 counter name "rule_c" accept comment "rule c"; }',
  ], 'rule_b is not deleted: a rule disabled or out of its schedule may come back, and its count with it');
  assert.deepEqual(delta.touched, ['counter rule_c', 'chain in_a']);
  assert.equal(nftDelta(before, base({ counters: before.counters }))!.script, '', 'the same counters: nothing to load');
});

test('a full load given the objects the kernel holds keeps the table, its counters, sets declared alike and regular chains; deletes every other object, in one script', () => {
  const table = base({
    counters: ['traffic_in', 'rule_a'],
    sets: [...base().sets, { name: 'alias_db_v4', declaration: ['type ipv4_addr', 'flags interval'], elements: ['10.9.0.0/16'] }],
    chains: [...base().chains, { name: 'in_b', rules: ['udp dport 53 accept'] }],
  });
  const listing = [
    'table inet other {', '\tchain elsewhere {', '\t}', '}',
    'table inet bulwark {', '\tcounter traffic_in {', '\t}', '\tcounter rule_a {', '\t}', '\tcounter rule_gone {', '\t}',
    '\tchain in_a {', '\t\ttcp dport 22 counter name "rule_a" accept comment "rule a"', '\t}', '',
    '\tchain in_b {', '\t\ttype filter hook input priority filter; policy accept;', '\t}',
    '\tchain filter_in {', '\t\ttype filter hook prerouting priority dstnat + 10; policy accept;', '\t}',
    '\tset alias_web_v4 {', '\t\ttype ipv4_addr', '\t\tflags interval', '\t}', '\tset alias_db_v4 {', '\t\ttype ipv4_addr', '\t}',
    '\tmap stray_map {', '\t\ttype ipv4_addr : verdict', '\t}',
    '\tquota stray_quota {', '\t\tover 10 mbytes', '\t}', '\tct helper ftp {', '\t\ttype "ftp" protocol tcp', '\t}', '}', '',
  ].join('\n');
  const present = parseNftTableObjects(listing)!;
  assert.deepEqual(present.map((o) => `${o.kind} ${o.name}`), [
    'counter traffic_in', 'counter rule_a', 'counter rule_gone', 'chain in_a', 'chain in_b', 'chain filter_in', 'set alias_web_v4', 'set alias_db_v4',
    'map stray_map', 'quota stray_quota', 'ct helper ftp',
  ], 'only objects of table inet bulwark');
  assert.deepEqual(present.find((o) => o.name === 'alias_web_v4')?.declaration, ['type ipv4_addr', 'flags interval']);
  const script = renderFullLoad(table, [], present).split('\n');
  const declared = script.indexOf('table inet bulwark {');
  assert.deepEqual(script.slice(2, declared), [
    'table inet bulwark',
    'flush table inet bulwark',
    'flush set inet bulwark alias_web_v4',
    'delete set inet bulwark alias_db_v4',
    'delete map inet bulwark stray_map',
    'delete chain inet bulwark in_b',
    'delete chain inet bulwark filter_in',
    'delete counter inet bulwark rule_gone',
    'delete quota inet bulwark stray_quota',
    'delete ct helper inet bulwark ftp',
    '',
  ], 'no delete table: counters traffic_in and rule_a, the set declared alike (emptied) and the regular chain in_a stay; a set declared otherwise, a chain with a hook and the rest go');
  assert.deepEqual(script.slice(declared), renderFullLoad(table).split('\n').slice(5), 'then the same declarations as the self-contained load');
  assert.match(renderFullLoad(table), /^table inet bulwark\ndelete table inet bulwark$/m, 'without a listing: replaced whole, as before');
  assert.equal(parseNftTableObjects('table inet bulwark {\n\tchain "odd name" {\n\t}\n}\n'), undefined, 'a name it cannot write bare: no listing, the table is replaced whole');
  assert.deepEqual(parseNftTableObjects(''), [], 'no table: nothing to delete');
});
