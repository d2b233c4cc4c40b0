/**
 * An alias that only gained entries is resolved from its last result with the new blocks merged in (an entry
 * added to 10,000). Whatever the edit, the result must be what resolving the same entries from nothing gives:
 * random edits (entries added anywhere, removed, duplicated, overlapping or adjacent to old ones, ranges, both
 * families, the alias switched off and on) are checked against a resolution under a name never seen before.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatCidr, mergeCidrs, parseCidr, withBlocksAdded, type Cidr } from '../src/compile/addresses.js';
import { resolveAliases } from '../src/compile/firewall-model.js';
import type { AliasData, WithId } from '../src/compile/firewall-types.js';

/** A small deterministic generator, so a failure names a reproducible seed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

const texts = (blocks: readonly Cidr[]) => blocks.map(formatCidr);

/** Addresses in a small space, so that new entries often overlap or touch old ones. */
function entry(next: () => number): string {
  const kind = next();
  const host = Math.floor(next() * 1024);
  const v4 = `10.0.${host >> 8}.${host & 255}`;
  if (kind < 0.45) return `${v4}/${24 + Math.floor(next() * 9)}`;
  if (kind < 0.65) return v4;
  if (kind < 0.8) return `${v4}-10.0.${host >> 8}.${Math.min(255, (host & 255) + Math.floor(next() * 40))}`;
  return `2001:db8::${(host % 64).toString(16)}00/${120 + Math.floor(next() * 9)}`;
}

test('merging blocks into a merged list gives what merging everything gives', () => {
  for (let seed = 1; seed <= 300; seed++) {
    const next = random(seed);
    const old = Array.from({ length: Math.floor(next() * 40) }, () => parseCidr(`10.0.${Math.floor(next() * 4)}.${Math.floor(next() * 256)}/${26 + Math.floor(next() * 7)}`)!);
    const added = Array.from({ length: Math.floor(next() * 4) }, () => parseCidr(`10.0.${Math.floor(next() * 4)}.${Math.floor(next() * 256)}/${26 + Math.floor(next() * 7)}`)!);
    const merged = mergeCidrs(old);
    assert.deepEqual(texts(withBlocksAdded(merged, added)), texts(mergeCidrs([...old, ...added])), `seed ${seed}`);
  }
  const merged = mergeCidrs([parseCidr('10.0.0.0/24')!, parseCidr('10.0.2.0/24')!]);
  assert.equal(withBlocksAdded(merged, []), merged, 'nothing added: the same list');
  assert.deepEqual(texts(withBlocksAdded(merged, [parseCidr('10.0.1.128/25')!])), ['10.0.0.0/24', '10.0.1.128/25', '10.0.2.0/24'], 'a block touching the next: merged whole, the same blocks');
  assert.deepEqual(texts(withBlocksAdded(merged, [parseCidr('10.0.1.0/24')!])), ['10.0.0.0/23', '10.0.2.0/24'], 'filling the gap joins all three');
  const apart = withBlocksAdded(merged, [parseCidr('10.0.5.0/24')!]);
  assert.equal(apart[0], merged[0], 'a block touching nothing leaves the old blocks as they were');
});

test('an alias edited any way resolves as the same entries resolve from nothing', () => {
  for (let seed = 1; seed <= 60; seed++) {
    const next = random(seed);
    let data: AliasData = { name: 'grown', alias_type: 'network', description: null, enabled: true, entries: Array.from({ length: 30 }, () => entry(next)) };
    for (let edit = 0; edit < 25; edit++) {
      const entries = [...data.entries];
      const choice = next();
      const at = Math.floor(next() * (entries.length + 1));
      if (choice < 0.5) entries.splice(at, 0, ...Array.from({ length: 1 + Math.floor(next() * 3) }, () => entry(next)));
      else if (choice < 0.6) entries.push(entries[Math.floor(next() * entries.length)] ?? entry(next));
      else if (choice < 0.75 && entries.length > 1) entries.splice(at, 1);
      else if (choice < 0.8) entries.splice(at, 1, entry(next));
      data = {
        ...data,
        entries,
        enabled: choice > 0.95 ? !data.enabled : data.enabled,
        alias_type: choice > 0.9 && choice <= 0.95 ? (data.alias_type === 'network' ? 'host' : 'network') : data.alias_type,
      };
      const grown = resolveAliases([{ id: 'a', data }]).get('grown')!;
      const name = `fresh${seed}x${edit}`;
      const fresh = resolveAliases([{ id: 'b', data: { ...data, name } } as WithId<AliasData>]).get(name)!;
      assert.deepEqual({ v4: texts(grown.v4), v6: texts(grown.v6) }, { v4: texts(fresh.v4), v6: texts(fresh.v6) }, `seed ${seed}, edit ${edit}`);
    }
  }
});

test('an entry added to a large alias keeps the old blocks and inserts the new one in order', () => {
  const entries = Array.from({ length: 2000 }, (_, i) => `10.${100 + (i >> 8)}.${i & 255}.0/25`);
  const data: AliasData = { name: 'big', alias_type: 'network', description: null, enabled: true, entries };
  const before = resolveAliases([{ id: 'big', data }]).get('big')!;
  const after = resolveAliases([{ id: 'big', data: { ...data, entries: [...entries.slice(0, 1000), '10.103.231.160/28', ...entries.slice(1000)] } }]).get('big')!;
  assert.equal(after.v4.length, before.v4.length + 1);
  assert.equal(after.v4[0], before.v4[0], 'old blocks are the same objects');
  assert.equal(formatCidr(after.v4[1000]), '10.103.231.160/28');
  assert.equal(after.v6, before.v6, 'the family that gained nothing keeps its list');
  const bad = { ...data, entries: [...entries, 'not-an-address'] };
  assert.throws(() => resolveAliases([{ id: 'big', data: bad }]), /entry "not-an-address" is not an address/);
});
