/**
 * ulogd's identity check: the NFLOG group of the namespace is bound by the recorded pid
 * (/proc/net/netfilter/nfnetlink_log, one line per bound group: group, listener port id, …).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nflogListener } from '../src/platform/linux/nflog-binding.js';

const TABLE = [
  '    7  14628     0 2 65531    100  1',
  '   32   2201     0 2 65535    100  1',
  '',
].join('\n');

test('the listener of an NFLOG group is read from nfnetlink_log; an unbound group has none', () => {
  assert.equal(nflogListener(TABLE, 7), 14628);
  assert.equal(nflogListener(TABLE, 32), 2201);
  assert.equal(nflogListener(TABLE, 3), null);
  assert.equal(nflogListener('', 7), null);
  assert.equal(nflogListener('garbage line\n', 7), null);
});
