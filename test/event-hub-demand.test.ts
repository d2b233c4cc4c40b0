import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventHub } from '../src/core/event-hub.js';
import { systemClock } from '../src/core/clock.js';

test('a producer on demand runs while its topic has a listener of its own, and stops when the last one leaves', () => {
  const hub = new EventHub(systemClock);
  const runs: string[] = [];
  const withdraw = hub.produceOnDemand('connection.new', () => {
    runs.push('start');
    return () => runs.push('stop');
  });
  assert.deepEqual(runs, [], 'nobody listens: not started');
  const offAll = hub.on('*', () => undefined);
  assert.deepEqual(runs, [], "a '*' listener does not ask for it");
  const offA = hub.on('connection.new', () => undefined);
  const offB = hub.on('connection.new', () => undefined);
  assert.deepEqual(runs, ['start'], 'started once for two listeners');
  offA();
  assert.deepEqual(runs, ['start']);
  offB();
  assert.deepEqual(runs, ['start', 'stop'], 'stopped with the last listener');
  const offC = hub.on('connection.new', () => undefined);
  withdraw();
  assert.deepEqual(runs, ['start', 'stop', 'start', 'stop'], 'withdrawn while running: stopped');
  offC();
  offAll();
  assert.equal(runs.length, 4);
});
