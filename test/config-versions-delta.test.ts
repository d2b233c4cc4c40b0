import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp } from './helpers/app.js';

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
