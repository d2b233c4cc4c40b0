/**
 * nsupdate scripts (src/render/nsupdate/nsupdate.ts, ACME DNS-01 over RFC 2136) from hostile values: every field that
 * reaches the script — server, zone, key name, algorithm, TSIG secret, record name and value — is refused when
 * it is not exactly its grammar, so the script always has its six lines and one command each; and the rfc2136
 * provider's `extra` is refused on write (400 naming the field).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { nsupdateScript, type NsupdateChange } from '../../src/render/nsupdate/nsupdate.js';
import { json } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';

const HOSTILE = ['\n', '\nsend\nupdate delete b16.test. A', '\r', ';', ' ', '"', '\u0000', 'x y', '../', '$(id)', '`id`', '\\', 'a\tb'];
const benign: NsupdateChange = {
  server: '192.0.2.53', port: 53, zone: 'example.org', keyName: 'acme-key', algorithm: 'hmac-sha256', secret: 'c2VjcmV0LXNlY3JldC1zZWNyZXQ=',
  operation: 'add', name: '_acme-challenge.www.example.org', value: 'wHUrcg0KVtl-Bnh7zTP0El9AaCgsyBK0pqw5ZG9WkhU',
};
const COMMANDS = ['server', 'zone', 'key', 'update', 'send'];

let t: AreaApp;
before(async () => {
  t = await startAreaApp();
});
after(() => t.close());

test('hostile values in every field of an RFC 2136 update are refused; accepted scripts keep their commands', () => {
  const shape = (script: string) => script.split('\n').filter(Boolean).map((line) => line.split(' ')[0]);
  assert.deepEqual(shape(nsupdateScript(benign)), COMMANDS);
  let refused = 0;
  for (const hostile of HOSTILE) {
    for (const field of ['server', 'zone', 'keyName', 'algorithm', 'secret', 'name', 'value'] as const) {
      for (const value of [hostile, `${benign[field]}${hostile}`, `${hostile}${benign[field]}`]) {
        try {
          const script = nsupdateScript({ ...benign, [field]: value });
          assert.deepEqual(shape(script), COMMANDS, `${field}=${JSON.stringify(value)}`);
          assert.equal(script.split('\n').length, 6);
        } catch (error) {
          assert.match((error as Error).message, /^RFC 2136 update refused: /);
          refused++;
        }
      }
    }
  }
  assert.equal(refused, HOSTILE.length * 7 * 3, 'every hostile value is refused');
});

test('an rfc2136 provider\'s server, key name and algorithm are checked on write', async () => {
  for (const [extra, field] of [
    [{ server: '192.0.2.53\nsend', key_name: 'k' }, 'extra.server'],
    [{ server: '192.0.2.53', key_name: 'k;x' }, 'extra.key_name'],
    [{ server: '192.0.2.53', key_name: 'k', algorithm: 'hmac-md5 x' }, 'extra.algorithm'],
  ] as const) {
    const response = await t.request('POST', '/api/v1/acme/dns-providers', { name: `p${field}`, kind: 'rfc2136', zone: 'example.org', extra });
    assert.equal(response.statusCode, 400, response.body);
    assert.match(json(response).error, new RegExp(`body\\.${field.replace('.', '\\.')}`));
  }
  const ok = await t.request('POST', '/api/v1/acme/dns-providers', { name: 'bind', kind: 'rfc2136', zone: 'example.org', api_token: benign.secret, extra: { server: '192.0.2.53:5353', key_name: 'acme-key' } });
  assert.equal(ok.statusCode, 201, ok.body);
});
