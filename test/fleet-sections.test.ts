/** How the agent turns a revision into one change set, and what it reports as drift (src/agent/sections.ts, rule-order.ts); how a template's sections are checked. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { driftOf, objectName, planChanges } from '../src/agent/sections.js';
import { bindVariables } from '../src/controller/drift-adoption.js';
import { checkSections } from '../src/controller/templates.js';
import { MemoryApplier } from '../src/agent/memory-applier.js';
import type { RulePlacement } from '../src/agent/rule-order.js';
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

test('settings sections are one document owned field by field: updated where a field differs, never created or deleted', () => {
  const local = { syslog: [{ enabled: false, host: '', port: 514, transport: 'udp' }] } as Record<string, Record<string, unknown>[]>;
  const owned = { sections: { syslog: [{ enabled: true, host: 'logs.example.net', port: 514 }] } };
  assert.deepEqual(planChanges(owned, null, (section) => local[section] ?? []), [
    { op: 'update', path: '/api/v1/settings/syslog', body: { enabled: true, host: 'logs.example.net', port: 514 } },
  ]);
  // No longer owned: its values stay as they are (there is nothing to delete).
  assert.deepEqual(planChanges({ sections: {} }, owned, (section) => local[section] ?? []), []);
  assert.deepEqual(driftOf(owned, (section) => local[section] ?? []), [{ section: 'syslog', name: 'syslog', kind: 'changed', fields: ['enabled', 'host'], values: { enabled: false, host: '' } }]);
});

test('a secret field is never read back: written when none is stored, when first owned or when the revision rotates it; drift only says it is gone', () => {
  const sa = (psk: string) => ({ name: 'HQ', remote_addr: '203.0.113.1', psk });
  const local = { ipsec: [{ id: 's1', name: 'hq', remote_addr: '203.0.113.1', has_psk: true }] } as Record<string, Record<string, unknown>[]>;
  const read = (section: string) => local[section] ?? [];
  assert.deepEqual(planChanges({ sections: { ipsec: [sa('one')] } }, { sections: { ipsec: [sa('one')] } }, read), [], 'the same secret: nothing to write');
  assert.deepEqual(planChanges({ sections: { ipsec: [sa('two')] } }, { sections: { ipsec: [sa('one')] } }, read).map((o) => o.op), ['update'], 'rotated');
  assert.deepEqual(planChanges({ sections: { ipsec: [sa('one')] } }, null, read).map((o) => o.op), ['update'], 'first owned: the appliance\'s own key is unknown');
  assert.deepEqual(driftOf({ sections: { ipsec: [sa('one')] } }, read), [], 'a stored secret is not drift (its value cannot be read)');
  const cleared = { ipsec: [{ ...local.ipsec[0], has_psk: false, remote_addr: '203.0.113.9' }] } as Record<string, Record<string, unknown>[]>;
  assert.deepEqual(driftOf({ sections: { ipsec: [sa('one')] } }, (section) => cleared[section] ?? []), [
    { section: 'ipsec', name: 'hq', kind: 'changed', fields: ['remote_addr', 'psk'], values: { remote_addr: '203.0.113.9' } },
  ]);
});

test('DHCP reservations are named by the client\'s MAC in either spelling, time sources by address in any case', () => {
  const local = {
    dhcp_reservations: [{ id: 'd1', mac_address: '02:00:00:00:00:0a', ip_address: '192.168.1.10' }],
    time_sources: [{ id: 't1', address: 'ntp.example.net', enabled: true }],
  } as Record<string, Record<string, unknown>[]>;
  const document = { sections: { dhcp_reservations: [{ mac_address: '02-00-00-00-00-0A', ip_address: '192.168.1.11' }], time_sources: [{ address: 'NTP.example.net', enabled: true }] } };
  assert.deepEqual(planChanges(document, null, (section) => local[section] ?? []), [
    { op: 'update', path: '/api/v1/dhcp/v4/reservations/d1', body: { mac_address: '02-00-00-00-00-0A', ip_address: '192.168.1.11' } },
  ]);
});

const rule = (id: string, label: string) => ({ id, label, action: 'pass' });

test('rules placed first or last: one block in the template\'s order, kept by a reorder that ends the change set; none when already in place', () => {
  const local = { rules: [rule('l1', 'local-a'), rule('f2', 'fleet-b'), rule('l2', 'local-b'), rule('f1', 'fleet-a')] } as Record<string, Record<string, unknown>[]>;
  const read = (section: string) => local[section] ?? [];
  const owned = [{ label: 'fleet-a', action: 'pass' }, { label: 'fleet-new', action: 'pass' }, { label: 'fleet-b', action: 'pass' }];
  const first = planChanges({ rule_placement: 'first', sections: { rules: owned } }, null, read);
  assert.deepEqual(first, [
    { op: 'create', path: '/api/v1/rules', key: 'fleet-rule-0', body: { label: 'fleet-new', action: 'pass' } },
    { op: 'update', path: '/api/v1/rules/reorder', body: { rule_ids: ['f1', { $ref: 'fleet-rule-0' }, 'f2', 'l1', 'l2'] } },
  ]);
  const last = planChanges({ rule_placement: 'last', sections: { rules: owned } }, null, read);
  assert.deepEqual(last.at(-1), { op: 'update', path: '/api/v1/rules/reorder', body: { rule_ids: ['l1', 'l2', 'f1', { $ref: 'fleet-rule-0' }, 'f2'] } });
  // Already the block: nothing to reorder. Without a placement the rules keep the priorities they give.
  const placed = [{ label: 'fleet-b', action: 'pass' }, { label: 'fleet-a', action: 'pass' }];
  const inPlace = { rules: [rule('l1', 'local-a'), rule('l2', 'local-b'), rule('f2', 'fleet-b'), rule('f1', 'fleet-a')] } as Record<string, Record<string, unknown>[]>;
  assert.deepEqual(planChanges({ rule_placement: 'last', sections: { rules: placed } }, null, (section) => inPlace[section] ?? []), []);
  assert.deepEqual(planChanges({ sections: { rules: owned } }, null, read).map((o) => o.path), ['/api/v1/rules']);
  // Drift: the block broken by a local reorder (named after the first owned rule out of place); never for `priority`.
  assert.deepEqual(driftOf({ rule_placement: 'last', sections: { rules: placed } }, (section) => inPlace[section] ?? []), []);
  assert.deepEqual(driftOf({ rule_placement: 'first', sections: { rules: placed } }, (section) => inPlace[section] ?? []), [{ section: 'rules', name: 'fleet-b', kind: 'moved', fields: [] }]);
  assert.deepEqual(driftOf({ sections: { rules: placed } }, (section) => inPlace[section] ?? []), []);
});

test('the light agents\' stand-in applies the new sections: settings merged, secrets kept as "one is set", the rule block reordered', async () => {
  const memory = new MemoryApplier();
  memory.objects.get('rules')!.push(rule('l1', 'local-a'));
  const document = { rule_placement: 'first' as const, sections: {
    rules: [{ label: 'fleet-a', action: 'block' }],
    dhcp_settings: [{ domain_name: 'branch.example' }],
    ipsec: [{ name: 'hq', remote_addr: '203.0.113.1', psk: 'the key' }],
  } };
  assert.deepEqual(await memory.apply(document, null), { outcome: 'applied', reason: null });
  assert.deepEqual(memory.objects.get('rules')!.map((r) => r.label), ['fleet-a', 'local-a']);
  assert.deepEqual(memory.objects.get('dhcp_settings'), [{ domain_name: 'branch.example' }]);
  assert.deepEqual(Object.keys(memory.objects.get('ipsec')![0]).sort(), ['has_psk', 'id', 'name', 'remote_addr']);
  assert.deepEqual(await memory.drift(document), []);
  memory.objects.get('rules')!.reverse();
  assert.deepEqual(await memory.drift(document), [{ section: 'rules', name: 'fleet-a', kind: 'moved', fields: [] }]);
  await memory.apply(document, { sections: {} });
  assert.deepEqual(await memory.drift(document), []);
});

test('a template\'s sections are refused with a 400 naming the field', () => {
  const refused: [unknown, RulePlacement, RegExp][] = [
    [{ syslog: [{ enabled: true }, { enabled: false }] }, 'priority', /^body\.sections\.syslog: a settings section is one object/],
    [{ dhcp_reservations: [{ mac_address: 'printer', ip_address: '192.168.1.9' }] }, 'priority', /^body\.sections\.dhcp_reservations\.0\.mac_address must be a MAC address/],
    [{ dhcp_reservations: [{ ip_address: '192.168.1.9', client_id: '01:aa' }] }, 'priority', /^body\.sections\.dhcp_reservations\.0\.mac_address must be a non-empty string/],
    [{ dhcp_reservations: [{ mac_address: '02:00:00:00:00:0a' }, { mac_address: '02-00-00-00-00-0A' }] }, 'priority', /^body\.sections\.dhcp_reservations\.1: "02:00:00:00:00:0a" appears twice/],
    [{ ipsec: [{ name: 'hq', psk: 'a key in clear text' }] }, 'priority', /^body\.sections\.ipsec\.0\.psk is a secret: write it as \$\{secret:name\}/],
    [{ rules: [{ label: 'a', priority: 5 }] }, 'first', /^body\.sections\.rules\.0\.priority: the template places its rules before/],
    [{ wireguard: [] }, 'priority', /^body\.sections\.wireguard: not a section a template can own/],
  ];
  for (const [sections, placement, message] of refused) {
    assert.throws(() => checkSections(sections, 'body.sections', placement), (error: Error & { statusCode?: number }) => error.statusCode === 400 && message.test(error.message), JSON.stringify(sections));
  }
  assert.doesNotThrow(() => checkSections({ ipsec: [{ name: 'hq', psk: '${secret:hq_psk}' }], dhcp_reservations: [{ mac_address: '${printer_mac}' }], rules: [{ label: 'a', priority: 5 }] }));
});

test('WireGuard peers: under the tunnel the template names (its id differs per appliance), written in the routes\' shape, read back in theirs', async () => {
  const key = 'x'.repeat(43) + '=';
  const peer = { tunnel: 'site-vpn', public_key: key, allowed_ips: ['10.8.0.2/32'], persistent_keepalive: 25 };
  const tunnels = (section: string) => new Map(section === 'wg_peers' ? [['site-vpn', 't1']] : []);
  assert.deepEqual(planChanges({ sections: { wg_peers: [peer] } }, null, () => [], tunnels), [
    { op: 'create', path: '/api/v1/vpn/wg/t1/peers', body: { public_key: key, allowed_ips: '10.8.0.2/32', keepalive: 25 }, object: peer },
  ]);
  const local = { wg_peers: [{ id: 'p1', tunnel_id: 't1', tunnel: 'site-vpn', public_key: key, allowed_ips: ['10.8.0.9/32'], persistent_keepalive: 25 }] } as Record<string, Record<string, unknown>[]>;
  assert.deepEqual(planChanges({ sections: { wg_peers: [peer] } }, null, (section) => local[section] ?? [], tunnels), [
    { op: 'update', path: '/api/v1/vpn/wg/t1/peers/p1', body: { allowed_ips: '10.8.0.2/32', keepalive: 25 }, object: peer },
  ], 'the public key names the peer and is not sent again');
  assert.deepEqual(planChanges({ sections: {} }, { sections: { wg_peers: [peer] } }, (section) => local[section] ?? [], tunnels), [{ op: 'delete', path: '/api/v1/vpn/wg/t1/peers/p1' }]);
  assert.throws(() => planChanges({ sections: { wg_peers: [{ ...peer, tunnel: 'other' }] } }, null, () => [], tunnels), /wg_peers: tunnel "other" does not exist on this appliance/);
  // The light agents' stand-in keeps a peer as the appliance reads it back, under its tunnel.
  const memory = new MemoryApplier();
  memory.parents.set('wg_peers', new Map([['site-vpn', 't1']]));
  await memory.apply({ sections: { wg_peers: [{ ...peer, preshared_key: 'k' }] } }, null);
  assert.deepEqual(memory.objects.get('wg_peers')!.map(({ id: _, ...rest }) => rest), [{ ...peer, has_preshared_key: true, tunnel_id: 't1' }]);
  assert.deepEqual(await memory.drift({ sections: { wg_peers: [{ ...peer, preshared_key: 'k' }] } }), []);
  assert.throws(() => checkSections({ wg_peers: [{ tunnel: 'site-vpn', public_key: 'not a key' }] }), /body\.sections\.wg_peers\.0\.public_key must be a WireGuard public key/);
});

test('DNS resolver settings, ACLs by network and blocklist sources by name in any case; a built-in source is never deleted, its status never set', async () => {
  const local = {
    dns_resolver: [{ enabled: false, port: 53, dnssec: true, forwarding_servers: ['1.1.1.1'] }],
    dns_acls: [{ id: 'c1', network: '10.0.0.0/8', action: 'allow' }],
    dns_blocklists: [
      { id: 'b1', name: 'Ads', url: 'https://lists.example/ads.txt', format: 'hosts', enabled: false, built_in: true, rule_count: 0 },
      { id: 'b2', name: 'mine', url: 'https://lists.example/mine.txt', format: 'domains', enabled: true, built_in: false },
    ],
  } as Record<string, Record<string, unknown>[]>;
  const read = (section: string) => local[section] ?? [];
  const owned = { sections: {
    dns_resolver: [{ enabled: true, port: 53, forwarding_servers: ['9.9.9.9'] }],
    dns_acls: [{ network: '10.0.0.0/8', action: 'refuse' }, { network: '192.168.7.0/24', action: 'allow' }],
    dns_blocklists: [{ name: 'ADS', enabled: true }, { name: 'Fleet malware', category: 'malware', url: 'https://lists.example/mw.txt', format: 'domains', enabled: true }],
  } };
  assert.deepEqual(planChanges(owned, null, read), [
    { op: 'update', path: '/api/v1/dns/resolver/config', body: { enabled: true, port: 53, forwarding_servers: ['9.9.9.9'] } },
    { op: 'update', path: '/api/v1/dns/resolver/acls/c1', body: { network: '10.0.0.0/8', action: 'refuse' } },
    { op: 'create', path: '/api/v1/dns/resolver/acls', body: { network: '192.168.7.0/24', action: 'allow' } },
    { op: 'update', path: '/api/v1/dns/blocklists/b1', body: { name: 'ADS', enabled: true } },
    { op: 'create', path: '/api/v1/dns/blocklists', body: { name: 'Fleet malware', category: 'malware', url: 'https://lists.example/mw.txt', format: 'domains', enabled: true } },
  ]);
  // No longer owned: the ACL and the template's own source go; the built-in source stays (the appliance refuses its delete).
  const mirrored = { ...local, dns_acls: [...local.dns_acls, { id: 'c2', network: '192.168.7.0/24', action: 'allow' }], dns_blocklists: [...local.dns_blocklists, { id: 'b3', name: 'fleet malware', built_in: false }] } as Record<string, Record<string, unknown>[]>;
  assert.deepEqual(planChanges({ sections: {} }, owned, (section) => mirrored[section] ?? []), [
    { op: 'delete', path: '/api/v1/dns/resolver/acls/c1' },
    { op: 'delete', path: '/api/v1/dns/resolver/acls/c2' },
    { op: 'delete', path: '/api/v1/dns/blocklists/b3' },
  ]);
  assert.deepEqual(driftOf(owned, read).map((d) => [d.section, d.name, d.kind, d.fields]), [
    ['dns_resolver', 'dns_resolver', 'changed', ['enabled', 'forwarding_servers']],
    ['dns_acls', '10.0.0.0/8', 'changed', ['action']],
    ['dns_acls', '192.168.7.0/24', 'missing', []],
    ['dns_blocklists', 'ads', 'changed', ['enabled']],
    ['dns_blocklists', 'fleet malware', 'missing', []],
  ]);
  // Adoption finds the template object a drift entry names the same way (a settings section by its section's name).
  assert.deepEqual([objectName('dns_resolver', owned.sections.dns_resolver[0]), objectName('dns_blocklists', { name: 'ADS' })], ['dns_resolver', 'ads']);
  const memory = new MemoryApplier();
  assert.deepEqual(await memory.apply(owned, null), { outcome: 'applied', reason: null });
  assert.deepEqual(await memory.drift(owned), []);
  for (const field of ['built_in', 'rule_count', 'last_result']) {
    assert.throws(() => checkSections({ dns_blocklists: [{ name: 'x', [field]: 1 }] }), (error: Error & { statusCode?: number }) => error.statusCode === 400 && error.message === `body.sections.dns_blocklists.0.${field} is set by the appliance itself; a template cannot set it`);
  }
  assert.throws(() => checkSections({ dns_acls: [{ action: 'allow' }] }), /body\.sections\.dns_acls\.0\.network must be a non-empty string/);
  assert.throws(() => checkSections({ dns_resolver: [{ port: 53 }, { port: 54 }] }), /body\.sections\.dns_resolver: a settings section is one object/);
  assert.throws(() => checkSections({ dns_blocklists: [{ name: 'Ads' }, { name: 'ADS' }] }), /body\.sections\.dns_blocklists\.1: "ads" appears twice/);
});

test('DHCP DDNS is a settings section whose TSIG secret is only a ${secret:name}: written when none is stored or rotated, drift without its value', () => {
  const ddns = (secret: string) => ({ enabled: true, forward_zone: 'branch.example', tsig_key: 'fleet-key', tsig_secret: secret });
  const local = { dhcp_ddns: [{ enabled: true, forward_zone: 'branch.example', tsig_key: 'fleet-key', ttl: 300, tsig_secret_set: true }] } as Record<string, Record<string, unknown>[]>;
  const read = (section: string) => local[section] ?? [];
  assert.deepEqual(planChanges({ sections: { dhcp_ddns: [ddns('one')] } }, { sections: { dhcp_ddns: [ddns('one')] } }, read), []);
  assert.deepEqual(planChanges({ sections: { dhcp_ddns: [ddns('two')] } }, { sections: { dhcp_ddns: [ddns('one')] } }, read), [
    { op: 'update', path: '/api/v1/dhcp/ddns', body: ddns('two') },
  ], 'rotated');
  const cleared = { dhcp_ddns: [{ ...local.dhcp_ddns[0], tsig_secret_set: false, forward_zone: 'local.example' }] } as Record<string, Record<string, unknown>[]>;
  assert.deepEqual(driftOf({ sections: { dhcp_ddns: [ddns('one')] } }, (section) => cleared[section] ?? []), [
    { section: 'dhcp_ddns', name: 'dhcp_ddns', kind: 'changed', fields: ['forward_zone', 'tsig_secret'], values: { forward_zone: 'local.example' } },
  ]);
  assert.throws(() => checkSections({ dhcp_ddns: [{ tsig_secret: 'c2VjcmV0' }] }), /^.*body\.sections\.dhcp_ddns\.0\.tsig_secret is a secret: write it as \$\{secret:name\}/);
  assert.doesNotThrow(() => checkSections({ dhcp_ddns: [{ enabled: true, tsig_secret: '${secret:ddns_tsig}' }] }));
});

test('the DNS allow-list and custom blocks have no update: an entry whose note differs is deleted and created again in the same change set', async () => {
  const local = { dns_whitelist: [{ id: 'w1', pattern: 'good.example.com', note: 'local' }], dns_customblocks: [{ id: 'c1', pattern: '*.ads.example.com', note: null }] } as Record<string, Record<string, unknown>[]>;
  const read = (section: string) => local[section] ?? [];
  const owned = { sections: {
    dns_whitelist: [{ pattern: 'GOOD.example.com', note: 'fleet' }],
    dns_customblocks: [{ pattern: '*.ads.example.com', note: null }, { pattern: 'tracker.example.net', note: null }],
  } };
  assert.deepEqual(planChanges(owned, null, read), [
    { op: 'delete', path: '/api/v1/dns/whitelist/w1' },
    { op: 'create', path: '/api/v1/dns/whitelist', body: { pattern: 'GOOD.example.com', note: 'fleet' } },
    { op: 'create', path: '/api/v1/dns/customblocks', body: { pattern: 'tracker.example.net', note: null } },
  ]);
  assert.deepEqual(driftOf(owned, read).map((d) => [d.section, d.name, d.kind, d.fields]), [
    ['dns_whitelist', 'good.example.com', 'changed', ['note']],
    ['dns_customblocks', 'tracker.example.net', 'missing', []],
  ]);
  const memory = new MemoryApplier();
  memory.objects.set('dns_whitelist', structuredClone(local.dns_whitelist));
  assert.deepEqual(await memory.apply(owned, null), { outcome: 'applied', reason: null });
  assert.deepEqual(memory.objects.get('dns_whitelist')!.map(({ id: _, ...rest }) => rest), [{ pattern: 'GOOD.example.com', note: 'fleet' }]);
  assert.deepEqual(await memory.drift(owned), []);
});
