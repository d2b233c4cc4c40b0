import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderUnbound, ROOT_TRUST_ANCHORS, type UnboundInput } from '../src/render/unbound/unbound.js';
import { renderBlocklistData, renderBlocklistFilter } from '../src/render/unbound/unbound-blocklist.js';
import { unboundEnvironment } from '../src/platform/unbound-python.js';
import { ALLOWED_CUSTOM_OPTIONS, parseCustomOptions } from '../src/render/unbound/unbound-custom-options.js';
import { renderKea, keaSubnetId, optionHex, type KeaInput } from '../src/render/kea/kea.js';
import { renderKeaDdns, type KeaDdnsInput } from '../src/render/kea/kea-ddns.js';
import { keaHookLibrary } from '../src/platform/kea-hooks.js';
import { renderChrony, type ChronyInput } from '../src/render/chrony/chrony.js';
import { runChecker } from '../src/platform/daemon-tools.js';
import { sharedFile } from './helpers/shared.js';
import { systemSkip } from './helpers/system-skip.js';
import { assertGolden } from './helpers/golden.js';

const checkerSkip = (program: string) => systemSkip(`${program}'s check`, { programs: [program] });

const RESOLVER: UnboundInput['resolver'] = {
  listen_interfaces: ['127.0.0.1', '192.168.1.1'], port: 53, dnssec: true, dhcp_domain: 'home.lan', local_zone_type: 'transparent',
  outgoing_interface: null, num_threads: 2, msg_cache_size: '8m', rrset_cache_size: 16777216, cache_max_ttl: 86400, cache_min_ttl: 0,
  prefetch: true, prefetch_key: true, infra_host_ttl: 900, unwanted_reply_threshold: 10000, log_queries: false, log_replies: false,
  log_verbosity: 1, hide_identity: true, hide_version: true, rebind_protection: true, private_addresses: ['10.0.0.0/8', '192.168.0.0/16', 'fd00::/8'],
  forwarding_enabled: true, forwarding_servers: ['1.1.1.1', '9.9.9.9:9953'], use_system_nameservers: false, dot_enabled: false,
  dot_upstream: ['1.1.1.1@853#cloudflare-dns.com'], custom_options: '# tuning\nso-reuseport: yes',
};

function unboundInput(dir: string, overrides: Partial<UnboundInput['resolver']> = {}): UnboundInput {
  return {
    resolver: { ...RESOLVER, ...overrides },
    hosts: [
      { hostname: 'nas', domain: 'home.lan', record_type: 'A', value: '192.168.1.10', enabled: true },
      { hostname: 'nas', domain: 'home.lan', record_type: 'AAAA', value: 'fd00::10', enabled: true },
      { hostname: 'www', domain: 'home.lan', record_type: 'CNAME', value: 'nas.home.lan', enabled: true },
      { hostname: 'home.lan', domain: '', record_type: 'MX', value: 'mail.home.lan', mx_priority: 5, enabled: true },
      { hostname: 'spf', domain: 'home.lan', record_type: 'TXT', value: 'v=spf1 "a" -all', enabled: true },
      { hostname: 'old', domain: 'home.lan', record_type: 'A', value: '192.168.1.99', enabled: false },
    ],
    domains: [{ domain: 'corp.example', server: '10.8.0.53:5353', enabled: true }, { domain: 'v6.example', server: '[2001:db8::53]:53', enabled: true }],
    acls: [{ network: '192.168.0.0/16', action: 'allow' }, { network: '0.0.0.0/0', action: 'refuse' }],
    dhcpNames: [{ hostname: 'printer', ip: '192.168.1.20' }],
    systemNameservers: ['192.0.2.1'],
    blocklistFilter: `${dir}/blocklists/filter.py`,
    paths: { directory: dir, pidfile: `${dir}/unbound.pid`, controlSocket: `${dir}/unbound.ctl`, trustAnchorFile: `${dir}/root.key`, logfile: '' },
  };
}

/** The blocklist filter the rendered configuration loads, written where unboundInput() names it. */
function writeFilter(dir: string): void {
  mkdirSync(join(dir, 'blocklists'));
  const data = join(dir, 'blocklists', 'filter.tsv');
  writeFileSync(data, renderBlocklistData([{ label: 'custom', action: 'nxdomain', redirectIp: null, names: ['ads.example.com', 'tracker.example.net'] }], []).data);
  writeFileSync(join(dir, 'blocklists', 'filter.py'), renderBlocklistFilter(data));
}

test('Unbound rendering matches the golden file', () => {
  assertGolden('unbound.conf', renderUnbound(unboundInput('/var/lib/bulwark/dns')));
  const blocklist = renderBlocklistData([
    { label: 'custom', action: 'nxdomain', redirectIp: null, names: ['ads.example.com'] },
    { label: 'blocklist-example', action: 'redirect', redirectIp: '0.0.0.0', names: ['ads.example.com', 'tracker.example.net', 'good.example.org'] },
  ], ['good.example.org', 'lan']);
  assertGolden('unbound-blocklist.tsv', blocklist.data);
  assert.deepEqual(blocklist.counts, [{ label: 'custom', names: 1 }, { label: 'blocklist-example', names: 1 }]);
  assertGolden('unbound-blocklist-filter.py', renderBlocklistFilter('/var/lib/bulwark/dns/blocklists/0123abcd.tsv'));
});

test('custom options cannot move files or open control', () => {
  assert.throws(() => parseCustomOptions('so-reuseport: yes\n  chroot: "/"'), /line 2: quotes are not allowed/);
  assert.throws(() => parseCustomOptions('chroot: /'), /line 1: chroot is not allowed/);
  assert.throws(() => parseCustomOptions('include: /etc/shadow'), /line 1: include is not allowed/);
  assert.throws(() => parseCustomOptions('edns-buffer-size: 1232 include: /etc/shadow'), /line 1: only one keyword per line/);
  assert.deepEqual(parseCustomOptions('# a comment\nedns-buffer-size: 1232'), [{ keyword: 'edns-buffer-size', value: '1232', line: 2 }]);
});

test('unbound-checkconf accepts the rendered configuration in each forwarding mode, and every option is a documented one', { skip: checkerSkip('unbound-checkconf') }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-unbound-'));
  try {
    writeFilter(dir);
    writeFileSync(join(dir, 'root.key'), `${ROOT_TRUST_ANCHORS}\n`);
    for (const overrides of [{}, { dot_enabled: true }, { forwarding_enabled: false, dnssec: false }, { use_system_nameservers: true }]) {
      const file = join(dir, 'unbound.conf');
      writeFileSync(file, renderUnbound(unboundInput(dir, overrides)));
      const result = await runChecker('unbound', file, { env: unboundEnvironment(readFileSync(file, 'utf8')).env });
      assert.equal(result.ok, true, `${JSON.stringify(overrides)}: ${result.output} ${result.details}`);
    }
    writeFileSync(join(dir, 'bad.conf'), renderUnbound(unboundInput(dir, { custom_options: 'msg-cache-slabs: 3' })));
    assert.equal((await runChecker('unbound', join(dir, 'bad.conf'), { env: unboundEnvironment(readFileSync(join(dir, 'bad.conf'), 'utf8')).env })).ok, false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const example = sharedFile('fixtures/unbound/unbound-example.conf.in');
  if (example.skip) return t.skip(example.skip);
  // NLnet Labs' annotated example documents every option: the renderer must use only documented ones.
  const documented = new Set([...readFileSync(example.path, 'utf8').matchAll(/^[\s#]*([a-z0-9-]+):/gm)].map((m) => m[1]));
  const used = new Set([...renderUnbound(unboundInput('/x', { dot_enabled: true })).matchAll(/^\s*([a-z0-9-]+):/gm)].map((m) => m[1]));
  used.delete('so-reuseport');
  const undocumented = [...used].filter((option) => !documented.has(option));
  assert.deepEqual(undocumented, []);
});

test('every option custom_options allows is a documented Unbound option that unbound-checkconf accepts', { skip: checkerSkip('unbound-checkconf') }, async (t) => {
  const sample = { yesno: 'yes', number: '4', size: '4m' } as const;
  const text = [...ALLOWED_CUSTOM_OPTIONS].map(([key, kind]) => `${key}: ${/buffer-size|udp-size/.test(key) ? '1232' : sample[kind]}`).join('\n');
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-unbound-options-'));
  try {
    writeFileSync(join(dir, 'root.key'), `${ROOT_TRUST_ANCHORS}\n`);
    writeFilter(dir);
    const rendered = renderUnbound(unboundInput(dir, { custom_options: text }));
    for (const key of ALLOWED_CUSTOM_OPTIONS.keys()) assert.match(rendered, new RegExp(`^    ${key}: `, 'm'));
    writeFileSync(join(dir, 'unbound.conf'), rendered);
    const result = await runChecker('unbound', join(dir, 'unbound.conf'), { env: unboundEnvironment(rendered).env });
    assert.equal(result.ok, true, result.details);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const example = sharedFile('fixtures/unbound/unbound-example.conf.in');
  if (example.skip) return t.skip(example.skip);
  const documented = new Set([...readFileSync(example.path, 'utf8').matchAll(/^[\s#]*([a-z0-9-]+):/gm)].map((m) => m[1]));
  assert.deepEqual([...ALLOWED_CUSTOM_OPTIONS.keys()].filter((key) => !documented.has(key)), []);
});

const KEA: KeaInput = {
  global: {
    interfaces: ['eth1', 'eth2'], authoritative: true, default_lease_time: 3600, max_lease_time: 86400, dns_servers: ['192.168.1.1'],
    domain_name: 'home.lan', domain_search: ['home.lan'], ntp_servers: [], wins_servers: [], next_server: null, boot_filename: null, log_level: 'info',
  },
  subnets: [
    {
      id: '6f1c2a3b-0000-4000-8000-000000000001', network: '192.168.1.1/24', pool_start: '192.168.1.100', pool_end: '192.168.1.199', gateway: '192.168.1.1',
      dns_servers: ['192.168.1.1', '1.1.1.1'], domain_name: 'home.lan', lease_time: 7200, max_lease_time: null, renewal_time: 1800, rebinding_time: 3150,
      subnet_type: 'address', enabled: true, trusted_relays: [], ntp_servers: ['192.168.1.1'],
      options: [{ code: 66, value_type: 'string', value: 'tftp.home.lan' }, { code: 150, value_type: 'ips', value: '192.168.1.5,192.168.1.6' }, { code: 252, value_type: 'hex', value: '0a:0b' }, { code: 23, value_type: 'u8', value: '64' }],
    },
    {
      id: '6f1c2a3b-0000-4000-8000-000000000002', network: '10.20.0.0/16', pool_start: '10.20.1.1', pool_end: '10.20.1.254', gateway: '10.20.0.1',
      subnet_type: 'address', enabled: true, trusted_relays: ['192.168.1.2'], options: [],
    },
    { id: '6f1c2a3b-0000-4000-8000-000000000003', network: '10.30.0.0/24', pool_start: '10.30.0.10', pool_end: '10.30.0.20', gateway: '10.30.0.1', subnet_type: 'address', enabled: false, trusted_relays: [], options: [] },
  ],
  reservations: [
    { subnet_id: '6f1c2a3b-0000-4000-8000-000000000001', mac_address: 'AA:BB:CC:00:11:22', ip_address: '192.168.1.10', hostname: 'nas' },
    { subnet_id: null, mac_address: '', client_id: '01:aa:bb:cc:00:11:33', ip_address: '10.20.5.5', hostname: null },
  ],
  ddns: { enabled: true, forward_zone: 'home.lan.', ttl: 300 },
  paths: { leaseFile: '/var/lib/bulwark/dhcp/kea-leases4.csv', controlSocket: '/var/lib/bulwark/dhcp/kea4-ctrl.sock' },
};

test('Kea rendering matches the golden file; subnet ids are stable; options are encoded as wire bytes', () => {
  const text = renderKea(KEA);
  assertGolden('kea-dhcp4.json', text);
  const parsed = JSON.parse(text);
  assert.equal(parsed.Dhcp4.subnet4.length, 2, 'disabled subnets are left out');
  assert.equal(parsed.Dhcp4.subnet4[0].subnet, '192.168.1.0/24', 'the network address, not the host address');
  assert.equal(parsed.Dhcp4.subnet4[1].reservations[0]['client-id'], '01:aa:bb:cc:00:11:33', 'a reservation without subnet goes to the subnet containing it');
  assert.equal(keaSubnetId(KEA.subnets[0].id, new Set()), keaSubnetId(KEA.subnets[0].id, new Set()));
  assert.equal(optionHex('ips', '192.168.1.5,192.168.1.6'), 'c0a80105c0a80106');
  assert.equal(optionHex('u16', '1500'), '05dc');
  assert.equal(optionHex('string', 'ab'), '6162');
});

test('kea-dhcp4 -t accepts the rendered configuration', { skip: checkerSkip('kea-dhcp4') }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-kea-'));
  try {
    const file = join(dir, 'kea-dhcp4.conf');
    // kea-dhcp4 -t checks that interfaces exist: use this host's loopback.
    writeFileSync(file, renderKea({ ...KEA, global: { ...KEA.global, interfaces: ['lo'] }, paths: { leaseFile: join(dir, 'leases.csv'), controlSocket: join(dir, 'ctrl.sock') } }));
    const result = await runChecker('kea-dhcp4', file);
    assert.equal(result.ok, true, result.output);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const HOOKS = { leaseCommands: '/usr/lib/x86_64-linux-gnu/kea/hooks/libdhcp_lease_cmds.so', highAvailability: '/usr/lib/x86_64-linux-gnu/kea/hooks/libdhcp_ha.so' };
const HA_PRIMARY = { mode: 'hot-standby' as const, peer: '192.0.2.2:8001', listen: '192.0.2.1:8000', node_id: 1 };
const DDNS: KeaDdnsInput = {
  forward_zone: 'home.lan', reverse_zone_v4: '1.168.192.in-addr.arpa', dns_server: '192.168.1.53:5353', tsig_key: 'dhcp-update',
  tsig_algorithm: 'hmac-sha256', tsig_secret: 'c2VjcmV0LXRzaWctc2VjcmV0LXRzaWc=', log_level: 'info', paths: { controlSocket: '/var/lib/bulwark/dhcp/kea-ddns-ctrl.sock' },
};

test('Kea high availability: the HA hook with both peers, this server named by its node id; refused without a listener', () => {
  const text = renderKea({ ...KEA, hooks: HOOKS, ha: HA_PRIMARY });
  assertGolden('kea-dhcp4-ha.json', text);
  const [, ha] = JSON.parse(text).Dhcp4['hooks-libraries'];
  const relationship = ha.parameters['high-availability'][0];
  assert.equal(relationship['this-server-name'], 'node1');
  assert.deepEqual(relationship.peers.map((p: { url: string; role: string }) => [p.url, p.role]), [['http://192.0.2.1:8000/', 'primary'], ['http://192.0.2.2:8001/', 'standby']]);
  const partner = JSON.parse(renderKea({ ...KEA, hooks: HOOKS, ha: { ...HA_PRIMARY, mode: 'active-active', node_id: 2 } })).Dhcp4['hooks-libraries'][1].parameters['high-availability'][0];
  assert.equal(partner['this-server-name'], 'node2');
  assert.equal(partner.mode, 'load-balancing');
  assert.deepEqual(partner.peers.map((p: { url: string; role: string }) => [p.url, p.role]), [['http://192.0.2.2:8001/', 'primary'], ['http://192.0.2.1:8000/', 'secondary']]);
  assert.throws(() => renderKea({ ...KEA, hooks: HOOKS, ha: { ...HA_PRIMARY, listen: null } }), /ha\.listen: is required/);
  assert.throws(() => renderKea({ ...KEA, hooks: HOOKS, ha: { ...HA_PRIMARY, peer: '192.0.2.2:8001/"x' } }), /ha\.peer: is not host:port/);
  assert.throws(() => renderKea({ ...KEA, hooks: { leaseCommands: HOOKS.leaseCommands }, ha: HA_PRIMARY }), /hooks\.highAvailability/);
});

test('kea-dhcp4 -t loads the rendered HA hook configuration', { skip: systemSkip('kea-dhcp4 -t with the HA hook', { programs: ['kea-dhcp4'], also: [['libdhcp_ha.so (kea-common)', keaHookLibrary('libdhcp_ha.so')]] }) }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-kea-ha-'));
  try {
    const file = join(dir, 'kea-dhcp4.conf');
    const hooks = { leaseCommands: keaHookLibrary('libdhcp_lease_cmds.so'), highAvailability: keaHookLibrary('libdhcp_ha.so') };
    writeFileSync(file, renderKea({ ...KEA, hooks, ha: HA_PRIMARY, global: { ...KEA.global, interfaces: ['lo'] }, paths: { leaseFile: join(dir, 'leases.csv'), controlSocket: join(dir, 'ctrl.sock') } }));
    const result = await runChecker('kea-dhcp4', file);
    assert.equal(result.ok, true, result.details);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('Kea DHCP-DDNS rendering: forward and reverse zones with the TSIG key; a malformed secret or no server is refused', () => {
  const text = renderKeaDdns(DDNS);
  assertGolden('kea-dhcp-ddns.json', text);
  const parsed = JSON.parse(text).DhcpDdns;
  assert.deepEqual(parsed['tsig-keys'], [{ name: 'dhcp-update', algorithm: 'HMAC-SHA256', secret: DDNS.tsig_secret }]);
  assert.deepEqual(parsed['forward-ddns']['ddns-domains'][0]['dns-servers'], [{ 'ip-address': '192.168.1.53', port: 5353 }]);
  assert.equal(parsed['reverse-ddns']['ddns-domains'][0].name, '1.168.192.in-addr.arpa.');
  assert.throws(() => renderKeaDdns({ ...DDNS, tsig_secret: 'not base64!"' }), /ddns\.tsig_secret: is not base64/);
  assert.throws(() => renderKeaDdns({ ...DDNS, dns_server: '' }), /ddns\.dns_server: is required/);
  assert.throws(() => renderKeaDdns({ ...DDNS, forward_zone: 'a"b' }), /ddns\.forward_zone: is not a DNS name/);
  assert.deepEqual(JSON.parse(renderKeaDdns({ ...DDNS, tsig_key: '', tsig_secret: '' })).DhcpDdns['tsig-keys'], []);
});

test('kea-dhcp-ddns -t accepts the rendered configuration', { skip: checkerSkip('kea-dhcp-ddns') }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-kea-ddns-'));
  try {
    const file = join(dir, 'kea-dhcp-ddns.conf');
    writeFileSync(file, renderKeaDdns({ ...DDNS, paths: { controlSocket: join(dir, 'ctrl.sock') } }));
    const result = await runChecker('kea-dhcp-ddns', file);
    assert.equal(result.ok, true, result.details);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const CHRONY: ChronyInput = {
  config: {
    clock_discipline: true, clock_step_threshold_ms: 128, clock_panic_threshold_ms: 1000, ntp_enabled: true, ntp_listen: '0.0.0.0:123',
    ntp_interfaces: [], ntp_rate_limit: 16, ntp_rate_burst: 32, nts_enabled: false, nts_ke_listen: '0.0.0.0:4460', nts_certificate: '', nts_private_key: '',
  },
  sources: [
    { address: 'time.cloudflare.com', nts: true, min_poll: 4, max_poll: 10, enabled: true },
    { address: 'pool.ntp.org', nts: false, min_poll: 6, max_poll: 10, enabled: true },
    { address: '192.0.2.123', nts: false, min_poll: 4, max_poll: 8, enabled: false },
  ],
  paths: { driftFile: '/var/lib/bulwark/time/chrony.drift', commandSocket: '/var/lib/bulwark/time/chronyd.sock', pidFile: '/var/lib/bulwark/time/chronyd.pid', ntsDumpDir: '/var/lib/bulwark/time/nts' },
};

test('chrony rendering matches the golden file', () => {
  assertGolden('chrony.conf', renderChrony(CHRONY));
  const serverOnly = renderChrony({ ...CHRONY, config: { ...CHRONY.config, ntp_enabled: false, clock_discipline: false } });
  assert.match(serverOnly, /^port 0$/m);
  assert.match(serverOnly, /^manual$/m);
});

test('chronyd -p accepts the rendered configuration, with and without NTS serving', { skip: checkerSkip('chronyd') }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-chrony-'));
  try {
    for (const config of [CHRONY.config, { ...CHRONY.config, nts_enabled: true, nts_certificate: '/etc/ssl/nts.crt', nts_private_key: '/etc/ssl/nts.key', ntp_listen: '127.0.0.1:10123' }]) {
      const file = join(dir, 'chrony.conf');
      writeFileSync(file, renderChrony({ ...CHRONY, config, nts: config.nts_enabled ? { key: config.nts_private_key, certificate: config.nts_certificate } : null }));
      const result = await runChecker('chronyd', file);
      assert.equal(result.ok, true, result.output);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
