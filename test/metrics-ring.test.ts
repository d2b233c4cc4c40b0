import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PointRing } from '../src/metrics/ring-buffer.js';
import { MetricsEngine } from '../src/metrics/metrics-engine.js';
import Database from 'better-sqlite3';
import { MIGRATIONS } from '../src/store/migrations.js';
import { migrate } from '../src/store/database.js';

const point = (t: number) => ({ t, v: t * 10, min: t, max: t * 100 });

test('a ring grows with its points, keeps time order across growth and wrap, and keeps the newest on resize', () => {
  const ring = new PointRing(20);
  for (let t = 1; t <= 13; t++) ring.push(point(t));
  assert.deepEqual(ring.last(100).map((p) => p.t), Array.from({ length: 13 }, (_, i) => i + 1));
  for (let t = 14; t <= 45; t++) ring.push(point(t));
  assert.equal(ring.size, 20);
  assert.deepEqual(ring.last(100).map((p) => p.t), Array.from({ length: 20 }, (_, i) => i + 26), 'full: the oldest are overwritten');
  assert.deepEqual(ring.range(30, 32), [point(30), point(31), point(32)]);
  ring.push({ t: 45, v: 1, min: 1, max: 1 });
  assert.deepEqual(ring.last(1), [{ t: 45, v: 1, min: 1, max: 1 }], 'the same bucket replaces the newest');
  ring.resize(5);
  assert.deepEqual(ring.last(100).map((p) => p.t), [41, 42, 43, 44, 45]);
  ring.resize(50);
  for (let t = 46; t <= 60; t++) ring.push(point(t));
  assert.deepEqual(ring.last(100).map((p) => p.t), Array.from({ length: 20 }, (_, i) => i + 41));
  const none = new PointRing(0);
  none.push(point(1));
  assert.equal(none.size, 0);
});

test('20,000 series sampled once hold memory for the points they have, not for their capacity', () => {
  const db = new Database(':memory:');
  migrate(db, MIGRATIONS);
  const engine = new MetricsEngine(db, { second: 3600, minute: 1440, hour: 720, day: 365 });
  const before = process.memoryUsage().arrayBuffers;
  const values = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`rule.${i}.packets`, i]));
  engine.record(1_700_000_000, values);
  engine.record(1_700_000_060, values); // closes every series' second and minute buckets
  const grown = process.memoryUsage().arrayBuffers - before;
  // At capacity: 20,000 x 6,165 points x 32 bytes = 3.9 GB. Grown by need: a few MB.
  assert.ok(grown < 100e6, `typed arrays grew by ${(grown / 1e6).toFixed(1)} MB`);
  assert.deepEqual(engine.query('rule.7.packets', 'second', 0, 2e9).map((p) => [p.t, p.v]), [[1_700_000_000, 7], [1_700_000_060, 7]]);
});
