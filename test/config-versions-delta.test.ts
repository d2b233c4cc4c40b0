import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startTestApp } from './helpers/app.js';
import { configurationHash } from '../src/store/config-versions.js';
import type { ConfigObject } from '../src/store/config-store.js';
import { canonicalJson } from '../src/core/canonical-json.js';

/**
 * A version recorded from the store is kept as the change from the one recorded before it (a few hundred bytes for
 * one changed object among thousands); reading it back gives exactly the objects the store held, also after the
 * versions it builds on were pruned.
 */
test('versions stored as changes read back exactly as recorded, across changes, removals and pruning', async () => {
  const t = await startTestApp();
  try {
    const { store, apply, db } = t.app.context;
    const versions = apply.versions;
    const ids: string[] = [];
    store.transaction(() => {
      for (let i = 0; i < 2000; i++) ids.push(store.insert('alias', { name: `a${i}`, alias_type: 'host', description: null, enabled: true, entries: [`10.0.${i >> 8}.${i & 255}`] }).id);
    });
    const snapshot = () => JSON.parse(JSON.stringify(store.everything()));
    const recorded: { version: number; objects: unknown }[] = [];
    const record = () => {
      const { version } = versions.record({ actor: 'test', source: 'apply', applied: true });
      recorded.push({ version, objects: snapshot() });
      return version;
    };
    const first = record();
    store.update('alias', ids[5], { name: 'a5', alias_type: 'host', description: 'changed', enabled: true, entries: ['10.9.9.9'] });
    const second = record();
    store.remove('alias', ids[6]);
    store.insert('alias', { name: 'fresh', alias_type: 'host', description: null, enabled: true, entries: ['10.8.8.8'] });
    store.reorder('alias', [...store.list('alias').map((o) => o.id)].reverse());
    const third = record();

    const rows = db.prepare('SELECT c.base_hash, c.depth, length(c.content) AS bytes FROM config_versions v JOIN config_contents c ON c.hash = v.hash WHERE v.version IN (?, ?, ?) ORDER BY v.version').all(first, second, third) as { base_hash: string | null; depth: number; bytes: number }[];
    assert.equal(rows[0].base_hash, null, 'the first is stored whole');
    assert.ok(rows[1].base_hash && rows[1].depth === 1, 'the second as the change from the first');
    assert.ok(rows[1].bytes * 20 < rows[0].bytes, `one changed object is small (${rows[1].bytes} bytes against ${rows[0].bytes})`);
    assert.equal(rows[2].depth, 2);
    for (const { version, objects } of recorded) assert.deepEqual(versions.content(version), objects, `version ${version} reads back as recorded`);

    // Retention removes the older versions; the contents the newest builds on stay as long as it needs them.
    versions.setRetention({ max_versions: 1, max_days: null });
    assert.deepEqual(versions.prune([]).sort(), [first, second].sort());
    assert.deepEqual(versions.content(third), recorded[2].objects, 'still readable after its bases lost their versions');
    store.update('alias', ids[7], { name: 'a7', alias_type: 'host', description: 'again', enabled: true, entries: ['10.7.7.7'] });
    const fourth = record();
    versions.prune([]);
    assert.deepEqual(versions.content(fourth), recorded[3].objects);
  } finally {
    await t.close();
  }
});

/**
 * The store's configuration hash resumes from remembered states after the unchanged leading objects; after every
 * kind of change it must equal the hash computed from scratch over a copy (no shared objects, nothing remembered),
 * and that hash the definition: sha256 of every object's line in hash order.
 */
test('the resumed configuration hash equals one computed from scratch after changes anywhere', async () => {
  const t = await startTestApp();
  try {
    const { store, apply } = t.app.context;
    const versions = apply.versions;
    const ids: string[] = [];
    store.transaction(() => {
      for (let i = 0; i < 1500; i++) ids.push(store.insert('alias', { name: `a${i}`, alias_type: 'host', description: null, enabled: true, entries: [`10.0.${i >> 8}.${i & 255}`] }).id);
    });
    const fromScratch = () => configurationHash(JSON.parse(JSON.stringify(store.everything())) as ConfigObject[]);
    const byDefinition = () => createHash('sha256').update(store.everything().map((o) =>
      `${JSON.stringify(o.kind)} ${JSON.stringify(o.id)} ${o.position} ${createHash('sha256').update(canonicalJson(o.data)).digest('hex')}\n`).join('')).digest('hex');
    const seen = new Set<string>();
    const check = (what: string) => {
      const hash = versions.currentHash();
      assert.equal(hash, fromScratch(), `${what}: resumed hash equals a fresh one`);
      assert.equal(hash, byDefinition(), `${what}: the hash is the sha256 of the lines`);
      assert.ok(!seen.has(hash), `${what}: a changed configuration hashes differently`);
      seen.add(hash);
    };
    check('first');
    const change = (i: number, description: string) => store.update('alias', ids[i], { name: `a${i}`, alias_type: 'host', description, enabled: true, entries: ['10.9.9.9'] });
    change(1400, 'late'); check('an object in the last chunk');
    change(3, 'early'); check('an object in the first chunk');
    change(700, 'middle'); check('an object in a middle chunk');
    store.remove('alias', ids[1499]); check('the last object removed');
    store.remove('alias', ids[0]); check('the first object removed (every chunk shifts)');
    store.insert('alias', { name: 'fresh', alias_type: 'host', description: null, enabled: true, entries: ['10.8.8.8'] }); check('an object added');
    store.insert('nat', { description: 'another kind' }); check('an object of another kind');
    // Objects of the kind that sorts last land after the last, short chunk.
    const last = [...store.everything()].at(-1)!.kind;
    store.insert(last, { ...store.list(last).at(-1)!.data }); check('an object appended after the last one');
    store.insert('zz_last', { note: 'one' }); check('an object of a kind sorting after every other');
    store.insert('zz_last', { note: 'two' }); check('another after it');
    store.reorder('alias', [...store.list('alias').map((o) => o.id)].reverse()); check('reordered');
  } finally {
    await t.close();
  }
});

test('the configuration hash is computed once writes pause: a burst is hashed once, after it, and the next apply finds it ready', async () => {
  const t = await startTestApp();
  try {
    const { store, apply } = t.app.context;
    let reads = 0;
    const everything = store.everything.bind(store);
    store.everything = () => {
      reads++;
      return everything();
    };
    for (let i = 0; i < 50; i++) store.insert('alias', { name: `q${i}`, alias_type: 'host', description: null, enabled: true, entries: [`10.1.0.${i}`] });
    assert.equal(reads, 0, 'not while the burst goes on');
    await apply.versions.hashed();
    assert.equal(reads, 1, 'once, after the burst');
    const hash = apply.versions.currentHash();
    assert.equal(reads, 1, 'the apply finds it ready');
    assert.equal(hash, configurationHash(everything()), 'and it is the hash of what the store holds');
    await apply.versions.hashed(); // nothing pending: answers at once
    assert.equal(reads, 1, 'nothing changed: nothing hashed');
    store.update('alias', store.list('alias')[0].id, { name: 'q0', alias_type: 'host', description: 'changed', enabled: true, entries: ['10.1.0.0'] });
    await apply.versions.hashed();
    assert.equal(reads, 2);
    assert.notEqual(apply.versions.currentHash(), hash);
    assert.equal(reads, 2);
  } finally {
    await t.close();
  }
});
