/** How the agent turns a revision into one change set, and what it reports as drift (src/agent/sections.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { driftOf, planChanges } from '../src/agent/sections.js';
import { bindVariables } from '../src/controller/drift-adoption.js';
import { newSealingKeyPair, openDocument, openSealed, sealFor } from '../src/agent/sealed-secrets.js';

const local = {
  aliases: [
    { id: 'a1', name: 'web', alias_type: 'host', entries: ['10.0.0.80'], description: 'local note' },
    { id: 'a2', name: 'old', alias_type: 'host', entries: ['10.0.0.1'] },
    { id: 'a3', name: 'mine', alias_type: 'host', entries: ['10.0.0.9'] },
    { id: 'a4', name: 'same', alias_type: 'host', entries: ['10.0.0.7'] },
  ],
  schedules: [],
} as Record<string, Record<string, unknown>[]>;

test('a revision becomes creates, updates where a template field differs, and deletes of what the previous revision owned; local objects stay', () => {
  const previous = { sections: { aliases: [{ name: 'web', alias_type: 'host', entries: ['10.0.0.80'] }, { name: 'old', alias_type: 'host', entries: ['10.0.0.1'] }, { name: 'same', alias_type: 'host', entries: ['10.0.0.7'] }] } };
  const next = { sections: {
    aliases: [{ name: 'web', alias_type: 'host', entries: ['10.0.0.81'] }, { name: 'same', alias_type: 'host', entries: ['10.0.0.7'] }, { name: 'new', alias_type: 'network', entries: ['10.1.0.0/16'] }],
    schedules: [{ name: 'office', time_ranges: '09:00-17:00' }],
  } };
  assert.deepEqual(planChanges(next, previous, (section) => local[section] ?? []), [
    { op: 'update', path: '/api/v1/aliases/a1', body: { name: 'web', alias_type: 'host', entries: ['10.0.0.81'] } },
    { op: 'create', path: '/api/v1/aliases', body: { name: 'new', alias_type: 'network', entries: ['10.1.0.0/16'] } },
    { op: 'delete', path: '/api/v1/aliases/a2' },
    { op: 'create', path: '/api/v1/schedules', body: { name: 'office', time_ranges: '09:00-17:00' } },
  ]);
  // Nothing to do when the appliance already matches; a section dropped from the templates is deleted whole.
  assert.deepEqual(planChanges(previous, previous, (section) => local[section] ?? []), []);
  assert.deepEqual(planChanges({ sections: {} }, previous, (section) => local[section] ?? []).map((o) => o.path), ['/api/v1/aliases/a1', '/api/v1/aliases/a2', '/api/v1/aliases/a4']);
  assert.throws(() => planChanges({ sections: { users: [] } }, null, () => []), /section "users" cannot be owned/);
});

test('drift: a template field changed locally, or an owned object deleted; fields the template does not set are the appliance\'s own', () => {
  const applied = { sections: { aliases: [{ name: 'web', alias_type: 'host', entries: ['10.0.0.81'] }, { name: 'gone', alias_type: 'host', entries: ['10.0.0.2'] }, { name: 'same', alias_type: 'host', entries: ['10.0.0.7'] }] } };
  assert.deepEqual(driftOf(applied, (section) => local[section] ?? []), [
    { section: 'aliases', name: 'web', kind: 'changed', fields: ['entries'], values: { entries: ['10.0.0.80'] } },
    { section: 'aliases', name: 'gone', kind: 'missing', fields: [] },
  ]);
});

test('rules and NAT are named by label, DNS host records by host, domain and record type', () => {
  const records = {
    rules: [{ id: 'r1', label: 'fleet-web', action: 'pass', protocol: 'tcp' }],
    dns_hosts: [{ id: 'h1', hostname: 'www', domain: 'example.com', record_type: 'A', value: '10.0.0.5' }, { id: 'h2', hostname: 'www', domain: 'example.com', record_type: 'AAAA', value: '2001:db8::5' }],
  } as Record<string, Record<string, unknown>[]>;
  const next = { sections: {
    rules: [{ label: 'fleet-web', action: 'block', protocol: 'tcp' }],
    dns_hosts: [{ hostname: 'www', domain: 'example.com', record_type: 'AAAA', value: '2001:db8::6' }, { hostname: 'www', domain: 'example.com', record_type: 'A', value: '10.0.0.5' }],
  } };
  assert.deepEqual(planChanges(next, null, (section) => records[section] ?? []), [
    { op: 'update', path: '/api/v1/rules/r1', body: { label: 'fleet-web', action: 'block', protocol: 'tcp' } },
    { op: 'update', path: '/api/v1/dns/resolver/hosts/h2', body: { hostname: 'www', domain: 'example.com', record_type: 'AAAA', value: '2001:db8::6' } },
  ]);
  assert.deepEqual(driftOf(next, (section) => records[section] ?? []).map((d) => d.name), ['fleet-web', 'www/example.com/AAAA']);
});

test('adoption through variables: a field that is exactly ${name} takes the local value as the variable; anything else must match', () => {
  assert.deepEqual(bindVariables(['${web}'], ['10.9.9.9'], { web: '10.0.0.1', other: 'x' }), { web: '10.9.9.9', other: 'x' });
  assert.deepEqual(bindVariables({ address: '${a}', port: 443 }, { address: '10.1.1.1', port: 443 }, {}), { a: '10.1.1.1' });
  assert.equal(bindVariables({ address: '${a}', port: 443 }, { address: '10.1.1.1', port: 8443 }, {}), null);
  assert.equal(bindVariables(['${web}'], ['10.9.9.9', '10.9.9.10'], {}), null);
  assert.equal(bindVariables(['host-${n}'], ['host-7'], {}), null, 'a variable inside a longer string is not guessed');
  assert.equal(bindVariables(['${a}', '${a}'], ['1', '2'], {}), null, 'one variable, two values');
});

test('sealed secrets: open only for the appliance and name they were sealed for; a document is opened value by value', () => {
  const mine = newSealingKeyPair();
  const other = newSealingKeyPair();
  const sealed = sealFor(mine.publicKeyPem, 'appliance-a', 'psk', 'the value');
  assert.match(sealed, /^bwsealed1:psk:[A-Za-z0-9_-]+$/);
  assert.equal(sealed.includes('the value'), false);
  assert.equal(openSealed(mine.privateKeyPem, 'appliance-a', sealed), 'the value');
  assert.throws(() => openSealed(mine.privateKeyPem, 'appliance-b', sealed), /does not open with this appliance's key/);
  assert.throws(() => openSealed(other.privateKeyPem, 'appliance-a', sealed), /does not open/);
  assert.throws(() => openSealed(mine.privateKeyPem, 'appliance-a', sealed.replace('bwsealed1:psk:', 'bwsealed1:other:')), /does not open/);
  const document = { sections: { aliases: [{ name: 'x', description: sealed, entries: ['10.0.0.1'] }] } };
  assert.deepEqual(openDocument(document, mine.privateKeyPem, 'appliance-a'), { sections: { aliases: [{ name: 'x', description: 'the value', entries: ['10.0.0.1'] }] } });
  assert.throws(() => openDocument(document, undefined, 'appliance-a'), /no sealing key: enrol it again/);
});
