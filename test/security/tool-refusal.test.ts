import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summariseRefusal } from '../../src/platform/tool-refusal.js';

const rendered = 'table inet bulwark {\n  chain input {\n    meta l4proto tcp bogus 22 accept\n  }\n}\n';

test('a refusal names the rendered line, its keyword and the one-line diagnostic, nothing else', () => {
  const output = '/dev/stdin:3:22-26: Error: syntax error, unexpected string\n    meta l4proto tcp bogus 22 accept\n                     ^^^^^\n';
  const { message, detail } = summariseRefusal('nft', output, rendered);
  assert.equal(message, 'nft refused line 3 (meta): syntax error, unexpected string');
  assert.equal(detail, output.trim(), 'the whole output is kept for the log');
});

test('output located in another file (an include) never reaches the client', () => {
  const secret = '9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0';
  const output = `/var/lib/bulwark/jwt.key:1:1-64: Error: syntax error, unexpected string\n${secret}\n^^^^\n`;
  const { message } = summariseRefusal('nft', output, rendered);
  assert.ok(!message.includes(secret));
  assert.ok(!message.includes('jwt.key'));
  assert.match(message, /without naming a line of it/);
});

test('pfctl style locations and control characters in the diagnostic', () => {
  const { message } = summariseRefusal('pfctl', 'stdin:2: syntax error\u001b[31m\r', 'table <a> persist { }\npass in quick on em0 bogus\n');
  assert.equal(message, 'pfctl refused line 2 (pass): syntax error[31m');
});
