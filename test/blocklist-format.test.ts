import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseBlocklist, normaliseDomain } from '../src/areas/dns/blocklist-format.js';
import { sharedFile } from './helpers/shared.js';

const fixture = (name: string) => sharedFile(`fixtures/dns-blocklists/${name}`);
const read = (name: string) => readFileSync(fixture(name).path, 'utf8');

test('hosts and domain-list editions of the same real-world list give the same 1205 names', { skip: fixture('hagezi/hosts_doh-vpn-proxy-bypass.txt').skip }, () => {
  const hosts = parseBlocklist(read('hagezi/hosts_doh-vpn-proxy-bypass.txt'), 'hosts');
  const domains = parseBlocklist(read('hagezi/domains_doh-vpn-proxy-bypass.txt'), 'domains');
  assert.equal(hosts.length, 1205);
  assert.deepEqual(new Set(hosts), new Set(domains));
});

test('the wildcard edition (*.name) and the Unbound local-zone edition of one list give the same 714 names', { skip: fixture('hagezi/wildcard_doh-vpn-proxy-bypass.txt').skip }, () => {
  const wildcard = parseBlocklist(read('hagezi/wildcard_doh-vpn-proxy-bypass.txt'), 'wildcard');
  const unbound = parseBlocklist(read('hagezi/unbound_doh-vpn-proxy-bypass.blacklist.conf'), 'unbound');
  const quoted = [...read('hagezi/unbound_doh-vpn-proxy-bypass.blacklist.conf').matchAll(/^local-zone: "([^"]+)\." always_null/gm)].map((m) => m[1]);
  assert.equal(wildcard.length, 714);
  assert.deepEqual(new Set(wildcard), new Set(unbound));
  assert.deepEqual(unbound, quoted, 'every local-zone line, in order');
  assert.deepEqual(new Set(parseBlocklist(read('hagezi/adblock_doh-vpn-proxy-bypass.txt'), 'adblock')), new Set(wildcard), 'the Adblock edition too');
});

test('unbound format: blocking zone types count, transparent ones and other statements do not', () => {
  const text = 'server:\nlocal-zone: "ads.example.com." always_nxdomain\nlocal-zone: "ok.example.com." transparent\nlocal-data: "x.example.com. A 0.0.0.0"\nlocal-zone: "Tracker.Example.NET" redirect\nlocal-zone: "odd.example" always_null extra\n';
  assert.deepEqual(parseBlocklist(text, 'unbound'), ['ads.example.com', 'tracker.example.net']);
});

test('the larger lists: header counts match, adblock rules reduce to their domains', { skip: fixture('hagezi/domains_fake.txt').skip }, () => {
  const domains = parseBlocklist(read('hagezi/domains_fake.txt'), 'domains');
  assert.equal(domains.length, Number(/# Domains: (\d+)/.exec(read('hagezi/domains_fake.txt'))![1]));
  assert.deepEqual(new Set(parseBlocklist(read('hagezi/hosts_fake.txt'), 'hosts')), new Set(domains));
  const adblock = parseBlocklist(read('hagezi/adblock_fake.txt'), 'adblock');
  assert.equal(adblock.length, Number(/! Domains: (\d+)/.exec(read('hagezi/adblock_fake.txt'))![1]));
  assert.ok(adblock.every((name) => domains.includes(name)), 'every adblock name is in the full domain list');
});

test('AdAway hosts file: localhost entries dropped, names lower-cased and unique', { skip: fixture('adaway-hosts.txt').skip }, () => {
  const names = parseBlocklist(read('adaway-hosts.txt'), 'hosts');
  assert.ok(names.length > 5000);
  assert.ok(names.includes('analytics.163.com'));
  assert.ok(!names.includes('localhost'));
  assert.equal(new Set(names).size, names.length);
  assert.ok(names.every((n) => n === n.toLowerCase()));
});

test('whitelist entries and their subdomains are removed', () => {
  const text = '0.0.0.0 ads.example.com\n0.0.0.0 cdn.good.example.org\n0.0.0.0 good.example.org\n127.0.0.1 other.example.net # trailing comment\n';
  assert.deepEqual(parseBlocklist(text, 'hosts', ['*.good.example.org']), ['ads.example.com', 'other.example.net']);
});

test('adblock: path and option rules are not DNS rules; RPZ owner names lose the zone origin', () => {
  const adblock = '! comment\n||ads.example.com^\n||example.org/banner/*\n||tracker.example.net^$third-party\n||important.example^$important\n@@||allowed.example^\n';
  assert.deepEqual(parseBlocklist(adblock, 'adblock'), ['ads.example.com', 'important.example']);
  const rpz = '$TTL 300\n$ORIGIN rpz.example.\n@ SOA localhost. root.localhost. 1 3600 600 86400 300\n@ NS localhost.\nbad.example.com CNAME .\n*.bad.example.com CNAME .\nevil.example.net.rpz.example. CNAME .\n';
  assert.deepEqual(parseBlocklist(rpz, 'rpz'), ['bad.example.com', 'evil.example.net']);
  assert.equal(normaliseDomain('*.Foo.Example.'), 'foo.example');
  assert.equal(normaliseDomain('nodot'), null);
  assert.equal(normaliseDomain('bad_label-.example'), null);
});
