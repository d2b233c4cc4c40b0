/** Canonical JSON: keys sorted at every level, and lists of plain values written as JSON.stringify writes them. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson } from '../src/core/canonical-json.js';

test('objects are written with sorted keys at every level, undefined members dropped', () => {
  assert.equal(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: undefined } }), '{"a":{"d":[3,{"y":2,"z":1}]},"b":1}');
  assert.equal(canonicalJson({ b: 1, a: 2 }), canonicalJson({ a: 2, b: 1 }));
});

test('a list of plain values is written exactly as element-by-element canonical JSON would write it', () => {
  const hostile = ['10.0.0.0/8', 'quote " backslash \\ newline \n', '\u2028\u2029', '😀', '\u0000', '', -0, 1e21, NaN, Infinity, true, false, null, undefined];
  const byElement = `[${hostile.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  assert.equal(canonicalJson(hostile), byElement);
  assert.equal(canonicalJson(hostile), JSON.stringify(hostile));
  assert.equal(canonicalJson({ entries: ['b', 'a'] }), '{"entries":["b","a"]}', 'a list keeps its order');
  assert.equal(canonicalJson([{ b: 1, a: 2 }, 'x']), '[{"a":2,"b":1},"x"]', 'a list holding an object is still written key-sorted');
});
