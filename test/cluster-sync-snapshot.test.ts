/**
 * Configuration sync's pure parts (issue 39 item 3): the hash chain's verdicts (same, ahead, behind, split-brain)
 * and the snapshot on the wire — secrets sealed for the peer and opened usable there, node-local sections left
 * out, and any change to a snapshot (or one made with another pair's key) refused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Sealer, randomHex } from '../src/core/crypto.js';
import { KindCatalogue } from '../src/store/kind-catalogue.js';
import type { ConfigObject } from '../src/store/config-store.js';
import { extend, relation, wellFormed } from '../src/areas/cluster/sync-chain.js';
import { openSnapshot, pairKeys, sealSnapshot, sharedHash } from '../src/areas/cluster/sync-snapshot.js';
import { openCertPush, sealCertPush } from '../src/areas/cluster/sync-cert-push.js';

test('the hash chain tells same, ahead, behind and split-brain apart', () => {
  const base = extend(extend([], 'a'.repeat(64)), 'b'.repeat(64));
  const ahead = extend(base, 'c'.repeat(64));
  const other = extend(base, 'd'.repeat(64));
  assert.ok(wellFormed(ahead));
  assert.equal(relation(base, base), 'same');
  assert.equal(relation(base, ahead), 'remote-ahead');
  assert.equal(relation(ahead, base), 'local-ahead');
  assert.equal(relation([], base), 'remote-ahead', 'a node with no history yet takes the first snapshot');
  assert.equal(relation(ahead, other), 'diverged', 'both changed since the last shared version: split-brain');
  assert.equal(extend(base, 'b'.repeat(64)).length, base.length, 'applying the same content again adds no version');
  // The same content after different histories is a different link: history, not just content, is compared.
  assert.equal(relation(extend(ahead, 'e'.repeat(64)), extend(other, 'e'.repeat(64))), 'diverged');
  const forged = ahead.map((entry, index) => (index === 1 ? { ...entry, hash: 'f'.repeat(64) } : entry));
  assert.ok(!wellFormed(forged), 'a link that does not follow from its content is seen');
});

function fixture() {
  const kinds = new KindCatalogue();
  kinds.declare({ kind: 'wg_tunnel', shape: 'collection', writeOnly: ['private_key'] } as never);
  kinds.declare({ kind: 'rule', shape: 'collection', writeOnly: [] } as never);
  const senderSealer = new Sealer(randomBytes(32));
  const receiverSealer = new Sealer(randomBytes(32));
  const privateKey = 'mK3eXample+PrivateKeyBase64Value/abcdefghijk=';
  const at = '2026-11-28T12:00:00.000Z';
  const objects: ConfigObject[] = [
    { kind: 'rule', id: 'r1', position: 0, data: { action: 'block', description: 'sync me' }, created_at: at, updated_at: at },
    { kind: 'wg_tunnel', id: 'w1', position: 0, data: { name: 'wg', private_key: senderSealer.seal(privateKey) }, created_at: at, updated_at: at },
    { kind: 'interface_config', id: 'i1', position: 0, data: { name: 'lan0', ipv4_address: '10.0.0.1/24' }, created_at: at, updated_at: at },
    { kind: 'cluster_local', id: 'l1', position: 0, data: { role: 'primary' }, created_at: at, updated_at: at },
  ];
  const keys = pairKeys(randomHex(32));
  const open = (sealer: Sealer) => (value: string) => (Sealer.isSealed(value) ? sealer.open(value) : value);
  const hash = sharedHash(objects, kinds, open(senderSealer), keys);
  const snapshot = sealSnapshot({ objects, kinds, sealer: senderSealer, keys, sender: 'a', sentAt: at, force: false, chain: extend([], hash) });
  return { kinds, senderSealer, receiverSealer, privateKey, keys, snapshot, hash, open };
}

test('a snapshot carries the shared sections only, its secret sealed for the peer; the peer opens it usable and seals it with its own key', () => {
  const { kinds, receiverSealer, privateKey, keys, snapshot, hash, open } = fixture();
  const wire = JSON.stringify(snapshot);
  assert.ok(!wire.includes(privateKey), 'no plain-text secret on the wire');
  assert.ok(!wire.includes('sealed:v1:'), "not the sender's at-rest sealing either (the peer could not open it)");
  assert.deepEqual(snapshot.objects.map((o) => o.kind).sort(), ['rule', 'wg_tunnel'], 'interface addresses and the role are node-local');
  const { objects } = openSnapshot(JSON.parse(wire), { kinds, sealer: receiverSealer, keys });
  const tunnel = objects.find((o) => o.kind === 'wg_tunnel')!;
  assert.ok(Sealer.isSealed(tunnel.data.private_key), 'sealed at rest on the receiver');
  assert.equal(receiverSealer.open(String(tunnel.data.private_key)), privateKey, "and opens with the receiver's own key");
  assert.equal(sharedHash(objects, kinds, open(receiverSealer), keys), hash, 'both nodes hash the same content equally, though each seals differently');
});

test('a modified snapshot, one made under another pair key, or one carrying a node-local section is refused', () => {
  const { kinds, receiverSealer, keys, snapshot } = fixture();
  const refuses = (body: unknown, message: RegExp, withKeys = keys) =>
    assert.throws(() => openSnapshot(body, { kinds, sealer: receiverSealer, keys: withKeys }), (error: Error & { statusCode?: number }) => error.statusCode === 400 && message.test(error.message));
  const changed = structuredClone(snapshot);
  (changed.objects[0].data as Record<string, unknown>).action = 'pass';
  refuses(changed, /body\.integrity/);
  refuses(snapshot, /body\.integrity/, pairKeys(randomHex(32)));
  refuses({ ...snapshot, objects: [] }, /body\.integrity/);
  refuses({ ...snapshot, extra: 1 }, /body/);
});

test('cert-push on the wire: the key sealed for the peer (never in clear), the body under the pair HMAC; a change or another pair refused', () => {
  const keys = pairKeys(randomHex(32));
  const material = { cert_pem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n', chain_pem: '-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n', key_pem: '-----BEGIN PRIVATE KEY-----\nsecret-key-body\n-----END PRIVATE KEY-----\n' };
  const body = sealCertPush(keys, 'cert-1', material, '2026-11-28T00:00:00.000Z');
  assert.ok(!JSON.stringify(body).includes('secret-key-body'), 'the key never travels in clear');
  assert.deepEqual(openCertPush(keys, body), { certId: 'cert-1', material });
  assert.throws(() => openCertPush(pairKeys(randomHex(32)), body), /body\.integrity/);
  assert.throws(() => openCertPush(keys, { ...body, cert_id: 'cert-2' }), /body\.integrity/, 'the certificate it is for is authenticated');
  assert.throws(() => openCertPush(keys, { ...body, private_key_pem: '-----BEGIN PRIVATE KEY-----' }), /private_key_pem/, 'a key in clear is refused');
});
