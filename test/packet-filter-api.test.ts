import { test } from 'node:test';
import assert from 'node:assert/strict';
import { json, startTestApp } from './helpers/app.js';
import { adminApi } from './helpers/admin-api.js';
import { startAreaApp } from './helpers/area-app.js';
import { emptySnapshot, pendingReport } from '../src/areas/packet-filter/snapshot.js';
import { packetFilterOf } from './helpers/areas.js';
import { createSimulatedPlatform } from '../src/platform/simulated/index.js';

const api = adminApi();
const { call, created } = api;
const expect400 = api.refused;

test('a rule created from the flat request is stored as the wire-format record', async () => {
  const rule = await created('/api/v1/rules', {
    action: 'block_drop', direction: 'in', protocol: 'TCP', src_addr: '10.1.0.0/16', dst_addr: '192.0.2.10',
    dst_port_start: 8080, dst_port_end: 8090, interface: 'eth1', label: 'app-tier', state_tracking: 'keep_state',
  });
  assert.match(rule.id, /^[0-9a-f-]{36}$/);
  assert.equal(rule.action, 'blockdrop');
  assert.equal(rule.protocol, 'tcp');
  assert.deepEqual(rule.rule_match, { src_addr: '10.1.0.0/16', src_port: null, dst_addr: '192.0.2.10', dst_port: { start: 8080, end: 8090 } });
  assert.equal(rule.quick, true);
  assert.equal(rule.ip_version, 'both');
  assert.equal(rule.status, 'active');
  assert.equal(rule.priority, 100);
  assert.deepEqual(rule.state_options, { tracking: 'keep_state', policy: null, adaptive_timeouts: null, timeout_tcp: null, timeout_udp: null, timeout_icmp: null });
  assert.equal(rule.schedule_id, null);
  assert.ok(rule.created_at && rule.updated_at);

  // PUT changes what it sends and keeps the rest; a record read back may be sent as is.
  const updated = await call('PUT', `/api/v1/rules/${rule.id}`, { dst_port_start: 443 });
  assert.equal(updated.status, 200);
  assert.deepEqual(updated.body.rule_match.dst_port, { start: 443, end: 443 });
  assert.equal(updated.body.label, 'app-tier');
  const echoed = await call('PUT', `/api/v1/rules/${rule.id}`, { ...updated.body, label: null });
  assert.equal(echoed.status, 200, JSON.stringify(echoed.body));
  assert.equal(echoed.body.label, null);
  assert.deepEqual(echoed.body.rule_match, updated.body.rule_match);
  assert.equal((await call('DELETE', `/api/v1/rules/${rule.id}`)).status, 204);
  assert.equal((await call('GET', `/api/v1/rules/${rule.id}`)).status, 404);
});

test('every rule field is validated and the 400 names it', async () => {
  const base = { action: 'pass', direction: 'in', protocol: 'tcp' };
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ ...base, action: 'allow' }, /body\.action must be one of/],
    [{ ...base, direction: 'sideways' }, /body\.direction must be one of: in, out, any/],
    [{ ...base, protocol: 'sctp' }, /body\.protocol must be one of/],
    [{ ...base, src_addr: '10.0.0.300' }, /body\.src_addr: "10\.0\.0\.300" is not/],
    [{ ...base, src_addr: '10.0.0.0/33' }, /body\.src_addr/],
    [{ ...base, dst_addr: '2001:db8::/129' }, /body\.dst_addr/],
    [{ ...base, dst_addr: '10.0.0.5/24' }, /body\.dst_addr: "10\.0\.0\.5\/24" has host bits set; the network is 10\.0\.0\.0\/24/],
    [{ ...base, dst_addr: 'webservers' }, /body\.dst_addr: .*write <webservers> to use an alias/],
    [{ ...base, dst_addr: '10.0.0.9-10.0.0.1' }, /body\.dst_addr/],
    [{ ...base, dst_addr: '<nosuch>' }, /body\.dst_addr: alias "nosuch" does not exist/],
    [{ ...base, protocol: 'icmp', dst_port_start: 80 }, /body\.dst_port_start: ports need protocol tcp, udp or tcp\/udp/],
    [{ ...base, dst_port_start: 90, dst_port_end: 80 }, /body\.dst_port_start must not be greater than dst_port_end/],
    [{ ...base, dst_port_end: 80 }, /body\.dst_port_end needs dst_port_start/],
    [{ ...base, dst_port_start: 70000 }, /body\.dst_port_start must be <= 65535/],
    [{ ...base, src_invert: true }, /body\.src_invert/],
    [{ ...base, src_addr: '10.0.0.1', dst_addr: '2001:db8::1' }, /body\.dst_addr: IPv6 destination with an IPv4 source/],
    [{ ...base, ip_version: 'inet6', src_addr: '10.0.0.1' }, /body\.ip_version: inet6 does not match the IPv4 address/],
    [{ ...base, protocol: 'icmp', ip_version: 'inet6' }, /body\.protocol: icmp is IPv4/],
    [{ ...base, interface: 'an-interface-name-too-long' }, /body\.interface must be 1-15 characters/],
    [{ ...base, label: 'bad"label' }, /body\.label must not contain quotes/],
    [{ ...base, label: 'x'.repeat(64) }, /body\.label must be at most 63 characters/],
    [{ ...base, priority: 10001 }, /body\.priority must be <= 10000/],
    [{ ...base, state_tracking: 'sticky' }, /body\.state_tracking must be one of: none, keep_state, modulate_state, synproxy_state/],
    [{ ...base, action: 'block', state_tracking: 'modulate_state' }, /body\.state_tracking: state options apply to pass rules only/],
    [{ ...base, schedule_id: '00000000-0000-4000-8000-000000000000' }, /body\.schedule_id: schedule "00000000-0000-4000-8000-000000000000" does not exist/],
    [{ ...base, schedule_id: 'tuesday' }, /body\.schedule_id must match format "uuid"/],
    [{ ...base, gateway: '192.0.2.1' }, /body\.gateway is not supported/],
    [{ ...base, colour: 'red' }, /body\.colour is not a known field/],
    [{ direction: 'in', protocol: 'tcp' }, /body\.action is required/],
  ];
  for (const [payload, message] of cases) await expect400('POST', '/api/v1/rules', payload, message);
  const rule = await created('/api/v1/rules', base);
  await expect400('PUT', `/api/v1/rules/${rule.id}`, { protocol: 'udp', dst_port_start: 80, dst_port_end: 70 }, /dst_port_start must not be greater/);
  await expect400('PUT', `/api/v1/rules/${rule.id}`, { rule_match: { dst_port: { start: 9, end: 1 } } }, /^body\.rule_match\.dst_port: \{"start":9,"end":1\} is not a valid port range \(start > end\)$/);
  assert.equal((await call('GET', `/api/v1/rules/${rule.id}`)).body.protocol, 'tcp', 'a refused update changes nothing');
  assert.equal((await call('DELETE', `/api/v1/rules/${rule.id}`)).status, 204);
});

test('accepted spellings are normalised; IPv6, ranges, negation and any work', async () => {
  const rules = [
    await created('/api/v1/rules', { action: 'block-return', direction: 'any', protocol: 'tcp+udp', src_addr: '2001:DB8::/32', src_invert: true, dst_port_start: 53 }),
    await created('/api/v1/rules', { action: 'blockreturn', direction: 'out', protocol: '*', dst_addr: '10.0.0.1 - 10.0.0.20' }),
    await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'icmp6', ip_version: 'inet6', interface: 'eth0', src_addr: 'interface address' }),
  ];
  assert.equal(rules[0].action, 'blockreturn');
  assert.equal(rules[0].protocol, 'tcp/udp');
  assert.equal(rules[0].rule_match.src_addr, '2001:db8::/32');
  assert.equal(rules[0].src_invert, true);
  assert.equal(rules[1].protocol, 'any');
  assert.equal(rules[1].rule_match.dst_addr, '10.0.0.1-10.0.0.20');
  assert.equal(rules[2].rule_match.src_addr, 'interface address', 'the interface\'s addresses, not widened to any');
  for (const rule of rules) assert.equal((await call('DELETE', `/api/v1/rules/${rule.id}`)).status, 204);
});

test('rules are listed by priority, then creation; a rule without priority goes last', async () => {
  const a = await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', label: 'a' });
  const b = await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', label: 'b', priority: 5 });
  const c = await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', label: 'c' });
  const list = await call('GET', '/api/v1/rules');
  assert.equal(list.headers['x-total-count'], '3');
  assert.deepEqual(list.body.map((r: { label: string }) => r.label), ['b', 'a', 'c']);
  await call('PUT', `/api/v1/rules/${c.id}`, { priority: 0 });
  assert.deepEqual((await call('GET', '/api/v1/rules')).body.map((r: { label: string }) => r.label), ['c', 'b', 'a']);
  for (const rule of [a, b, c]) await call('DELETE', `/api/v1/rules/${rule.id}`);
});

test('reorder takes a complete permutation atomically and sets priority = position', async () => {
  const ids: string[] = [];
  for (const label of ['r0', 'r1', 'r2', 'r3']) ids.push((await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', label })).id);
  const before = (await call('GET', '/api/v1/rules')).body;
  const unknown = '00000000-0000-4000-8000-00000000abcd';
  await expect400('PUT', '/api/v1/rules/reorder', { rule_ids: [ids[1], ids[0], ids[2]] }, /must list every rule exactly once; missing 1/);
  await expect400('PUT', '/api/v1/rules/reorder', { rule_ids: [ids[1], ids[0], ids[2], unknown] }, new RegExp(`unknown rule ${unknown}`));
  await expect400('PUT', '/api/v1/rules/reorder', { rule_ids: [ids[1], ids[1], ids[2], ids[3]] }, /lists rule .* twice/);
  await expect400('PUT', '/api/v1/rules/reorder', { rule_ids: ['nope'] }, /body\.rule_ids\.0 must match format "uuid"/);
  assert.deepEqual((await call('GET', '/api/v1/rules')).body, before, 'a refused reorder changes nothing');

  const order = [ids[3], ids[1], ids[0], ids[2]];
  const response = await call('PUT', '/api/v1/rules/reorder', { rule_ids: order });
  assert.equal(response.status, 200);
  assert.equal(response.body.count, 4);
  const after = (await call('GET', '/api/v1/rules')).body;
  assert.deepEqual(after.map((r: { id: string }) => r.id), order);
  assert.deepEqual(after.map((r: { priority: number }) => r.priority), [0, 1, 2, 3]);
  for (const id of ids) await call('DELETE', `/api/v1/rules/${id}`);
});

test('aliases: typed entries, unique names, nesting without cycles, in use → 409', async () => {
  const cases: [Record<string, unknown>, RegExp, number?][] = [
    [{ name: 'bad name', alias_type: 'host', entries: [] }, /body\.name must be 1-31 characters/],
    [{ name: 'bruteforce', alias_type: 'host', entries: [] }, /body\.name "bruteforce" is reserved/],
    [{ name: 'h', alias_type: 'hosts', entries: [] }, /body\.alias_type must be one of: host, network, port, url_table/],
    [{ name: 'h', alias_type: 'host', entries: ['10.0.0.0/24'] }, /body\.entries\.0: "10\.0\.0\.0\/24" is not an IPv4 or IPv6 host address/],
    [{ name: 'h', alias_type: 'host', entries: ['10.0.0.1', 'example'] }, /body\.entries\.1/],
    [{ name: 'n', alias_type: 'network', entries: ['10.0.0.1/24'] }, /body\.entries\.0: "10\.0\.0\.1\/24" has host bits set/],
    [{ name: 'p', alias_type: 'port', entries: ['80', '70000'] }, /body\.entries\.1: "70000" is not a port/],
    [{ name: 'u', alias_type: 'url', entries: ['http://example.com/list'] }, /body\.entries\.0: url_table sources must be https URLs/],
    [{ name: 'x', alias_type: 'network', entries: ['<nosuch>'] }, /body\.entries: alias "nosuch" does not exist/],
    [{ name: 'x', alias_type: 'host', entries: ['<x>'] }, /body\.entries\.0: an alias cannot contain itself/],
  ];
  for (const [payload, message] of cases) await expect400('POST', '/api/v1/aliases', payload, message);

  const web = await created('/api/v1/aliases', { name: 'web', alias_type: 'host', entries: ['192.0.2.10', '2001:DB8::10'] });
  assert.deepEqual(web.entries, ['192.0.2.10', '2001:db8::10']);
  assert.equal(web.enabled, true);
  assert.equal(web.description, null);
  const duplicate = await call('POST', '/api/v1/aliases', { name: 'web', alias_type: 'host', entries: [] });
  assert.equal(duplicate.status, 409);
  const ports = await created('/api/v1/aliases', { name: 'webports', alias_type: 'port', entries: ['80', '8000-8080'] });
  assert.deepEqual(ports.entries, ['80', '8000:8080']);
  const nets = await created('/api/v1/aliases', { name: 'nets', alias_type: 'network', entries: ['10.0.0.0/8', '<web>', '172.16.0.1-172.16.0.9'] });
  const feed = await created('/api/v1/aliases', { name: 'feed', alias_type: 'urltable', entries: ['https://lists.example.org/drop.txt'] });
  assert.equal(feed.alias_type, 'url_table');
  await expect400('POST', '/api/v1/aliases', { name: 'mixed', alias_type: 'host', entries: ['<nets>'] }, /a host alias cannot contain the network alias "nets"/);
  await expect400('POST', '/api/v1/aliases', { name: 'mixed', alias_type: 'port', entries: ['<web>'] }, /a port alias cannot contain the host alias "web"/);
  // web → nets would close the loop nets → web → nets.
  await expect400('PUT', `/api/v1/aliases/${web.id}`, { alias_type: 'network', entries: ['<nets>'] }, /nesting would form a cycle: web -> nets -> web/);

  // In use by an alias and by a rule: delete and rename refused; a port alias is no address.
  assert.equal((await call('DELETE', `/api/v1/aliases/${web.id}`)).status, 409);
  const rule = await created('/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_addr: '<nets>', dst_port_start: 22 });
  const inUse = await call('DELETE', `/api/v1/aliases/${nets.id}`);
  assert.equal(inUse.status, 409);
  assert.match(inUse.body.error, /in use by rule/);
  const rename = await call('PUT', `/api/v1/aliases/${nets.id}`, { name: 'networks' });
  assert.equal(rename.status, 409);
  await expect400('POST', '/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_addr: '<webports>' }, /body\.dst_addr: alias "webports" is a port alias/);
  // Changing entries of an alias in use is fine.
  assert.equal((await call('PUT', `/api/v1/aliases/${nets.id}`, { entries: ['10.0.0.0/8'] })).status, 200);
  await call('DELETE', `/api/v1/rules/${rule.id}`);
  for (const alias of [nets, web, ports, feed]) assert.equal((await call('DELETE', `/api/v1/aliases/${alias.id}`)).status, 204);
});

test('schedules: ranges and days as string or list, validated; in use → 409', async () => {
  const office = await created('/api/v1/schedules', { name: 'office', time_ranges: ['08:00-12:00', '13:00-17:30'], days_of_week: 'mon,tue,wed,thu,fri' });
  assert.equal(office.time_ranges, '08:00-12:00,13:00-17:30');
  assert.equal(office.days_of_week, 'mon,tue,wed,thu,fri');
  assert.equal(office.enabled, true);
  const night = await created('/api/v1/schedules', { name: 'night', time_ranges: '22:00-06:00' });
  assert.equal(night.days_of_week, 'mon,tue,wed,thu,fri,sat,sun');
  await expect400('POST', '/api/v1/schedules', { name: 'x', time_ranges: '25:00-26:00' }, /body\.time_ranges\.0: "25:00-26:00" is not a range HH:MM-HH:MM/);
  await expect400('POST', '/api/v1/schedules', { name: 'x', time_ranges: [] }, /body\.time_ranges must hold at least one range/);
  await expect400('POST', '/api/v1/schedules', { name: 'x', time_ranges: '08:00-09:00', days_of_week: ['mon', 'funday'] }, /body\.days_of_week\.1 must be one of: mon, tue/);
  assert.equal((await call('POST', '/api/v1/schedules', { name: 'office', time_ranges: '01:00-02:00' })).status, 409);
  const updated = await call('PUT', `/api/v1/schedules/${night.id}`, { enabled: false });
  assert.equal(updated.status, 200);
  assert.equal(updated.body.time_ranges, '22:00-06:00');
  const one = await call('GET', `/api/v1/schedules/${night.id}`);
  assert.deepEqual([one.status, one.body.enabled], [200, false], 'one schedule is read (an extension, for editing with If-Match)');
  const rule = await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', schedule_id: office.id });
  assert.equal((await call('DELETE', `/api/v1/schedules/${office.id}`)).status, 409);
  await call('DELETE', `/api/v1/rules/${rule.id}`);
  assert.equal((await call('DELETE', `/api/v1/schedules/${office.id}`)).status, 204);
  assert.equal((await call('DELETE', `/api/v1/schedules/${night.id}`)).status, 204);
  assert.equal((await call('GET', `/api/v1/schedules/${night.id}`)).status, 404);
});

test('NAT: flat request → record with redirect, types validated, explicit order', async () => {
  const forward = await created('/api/v1/nat', {
    nat_type: 'rdr', interface: 'eth0', protocol: 'tcp', dst_addr: '203.0.113.1', dst_port_start: 8443,
    redirect_addr: '192.168.1.10', redirect_port_start: 443, label: 'web',
  });
  assert.equal(forward.nat_type, 'dnat');
  assert.deepEqual(forward.redirect, { address: '192.168.1.10', port: { start: 443, end: 443 } });
  assert.deepEqual(forward.dst_port, { start: 8443, end: 8443 });
  assert.equal(forward.src_addr, 'any');
  assert.equal(forward.static_port, false);
  const masq = await created('/api/v1/nat', { nat_type: 'masq', interface: 'eth0', protocol: 'any', src_addr: '192.168.0.0/16' });
  assert.equal(masq.nat_type, 'masquerade');
  const snat = await created('/api/v1/nat', { nat_type: 'snat', interface: 'eth0', protocol: 'any', src_addr: '10.1.0.0/16', redirect_addr: '203.0.113.5', static_port: true });
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ nat_type: 'nat64', interface: 'eth0', protocol: 'any' }, /body\.nat_type: nat64 is not supported/],
    [{ nat_type: 'dnat', interface: 'eth0', protocol: 'tcp', redirect_addr: '192.168.1.10' }, /a dnat rule needs a destination port or a redirect port/],
    [{ nat_type: 'dnat', interface: 'eth0', protocol: 'tcp', dst_port_start: 80, redirect_addr: '192.168.1.0/24' }, /body\.redirect_addr must be a single IPv4 or IPv6 address for dnat/],
    [{ nat_type: 'dnat', interface: 'eth0', protocol: 'icmp', dst_port_start: 80, redirect_addr: '192.168.1.1' }, /ports need protocol tcp, udp or tcp\/udp/],
    [{ nat_type: 'dnat', interface: 'eth0', protocol: 'tcp', dst_port_start: 80, redirect_addr: '192.168.1.1', redirect_port_start: 80, redirect_port_end: 90 }, /the redirect port must be a single port/],
    [{ nat_type: 'snat', interface: 'eth0', protocol: 'any', src_addr: '2001:db8::/64', redirect_addr: '203.0.113.5' }, /body\.redirect_addr: IPv4 target for IPv6 addresses/],
    [{ nat_type: 'masquerade', interface: 'eth0', protocol: 'any', redirect_addr: '203.0.113.5' }, /masquerade translates to the interface address/],
    [{ nat_type: 'binat', interface: 'eth0', protocol: 'any', src_addr: '10.0.0.0/24', redirect_addr: '203.0.113.7' }, /body\.src_addr must be the single inside address for binat/],
    [{ nat_type: 'snat', interface: 'bad iface', protocol: 'any', redirect_addr: '203.0.113.5' }, /body\.interface must be 1-15 characters/],
    [{ nat_type: 'snat', interface: 'eth0', protocol: 'any', src_addr: '<nosuch>', redirect_addr: '203.0.113.5' }, /body\.src_addr: alias "nosuch" does not exist/],
    [{ nat_type: 'snat', protocol: 'any', redirect_addr: '203.0.113.5' }, /body\.interface is required/],
  ];
  for (const [payload, message] of cases) await expect400('POST', '/api/v1/nat', payload, message);

  const listed = (await call('GET', '/api/v1/nat')).body.map((n: { id: string }) => n.id);
  assert.deepEqual(listed, [forward.id, masq.id, snat.id]);
  await expect400('PUT', '/api/v1/nat/reorder', { rule_ids: [snat.id, forward.id] }, /must list every NAT rule exactly once/);
  const reordered = await call('PUT', '/api/v1/nat/reorder', { rule_ids: [snat.id, forward.id, masq.id] });
  assert.equal(reordered.status, 200);
  assert.deepEqual((await call('GET', '/api/v1/nat')).body.map((n: { id: string }) => n.id), [snat.id, forward.id, masq.id]);

  const output = await call('GET', '/api/v1/nat/pf-output');
  assert.equal(output.status, 200);
  const text = output.body.join('\n');
  assert.match(text, /iifname "eth0" ip daddr 203\.0\.113\.1 tcp dport 8443 counter dnat ip to 192\.168\.1\.10:443 comment "nat [^"]+"/);
  assert.match(text, /oifname "eth0" ip saddr 192\.168\.0\.0\/16 counter masquerade comment "nat [^"]+"/);
  assert.ok(text.indexOf('snat ip to 203.0.113.5') < text.indexOf('masquerade'), 'NAT rules compile in their stored order');
  for (const n of [forward, masq, snat]) assert.equal((await call('DELETE', `/api/v1/nat/${n.id}`)).status, 204);
});

test('block logging is a stored toggle; system rules show anti-lockout for the API port', async () => {
  assert.deepEqual((await call('GET', '/api/v1/rules/block-logging')).body, { enabled: true });
  assert.deepEqual((await call('PUT', '/api/v1/rules/block-logging', { enabled: false })).body, { enabled: false });
  assert.deepEqual((await call('GET', '/api/v1/rules/block-logging')).body, { enabled: false });
  await expect400('PUT', '/api/v1/rules/block-logging', { enabled: 'yes' }, /body\.enabled must be boolean/);
  const system = await call('GET', '/api/v1/rules/system');
  assert.equal(system.status, 200);
  const lines: string[] = system.body;
  const port = api.t.app.context.config.port;
  assert.ok(lines.some((l) => l.includes(`tcp dport ${port} accept`) && l.includes('anti-lockout')), lines.join('\n'));
  assert.ok(lines.some((l) => l.includes('ct state established,related accept')));
  assert.ok(lines.some((l) => l.includes('iifname "lo" accept')));
  assert.ok(lines.some((l) => l.includes('default policy: accept')));
  await call('PUT', '/api/v1/rules/block-logging', { enabled: true });
});

test('pending lists what differs from the applied configuration; reload applies it', async () => {
  const reset = await call('POST', '/api/v1/reload');
  assert.equal(reset.status, 200, JSON.stringify(reset.body));
  const clean = (await call('GET', '/api/v1/pending')).body;
  assert.equal(clean.firewall, false);
  assert.equal(clean.nat, false);
  assert.equal(clean.applied_at, reset.body.applied_at);

  const keep = await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', label: 'keep' });
  const gone = await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', label: 'gone' });
  const alias = await created('/api/v1/aliases', { name: 'pending-a', alias_type: 'host', entries: ['192.0.2.1'] });
  let pending = (await call('GET', '/api/v1/pending')).body;
  assert.equal(pending.firewall, true);
  assert.equal(pending.nat, false);
  assert.deepEqual(pending.changes.rules, { added: [keep.id, gone.id], changed: [], removed: [] });
  assert.deepEqual(pending.changes.aliases.added, [alias.id]);

  const applied = await call('POST', '/api/v1/reload');
  assert.equal(applied.status, 200);
  assert.equal(applied.body.message, 'Changes applied successfully');
  assert.equal(applied.body.rules, 2);
  assert.equal((await call('GET', '/api/v1/pending')).body.firewall, false);
  const simulated = api.t.app.context.platform.packetFilter as unknown as { appliedText: string };
  assert.match(simulated.appliedText, new RegExp(`comment "rule ${keep.id}"`));

  await call('PUT', `/api/v1/rules/${keep.id}`, { log: true });
  await call('DELETE', `/api/v1/rules/${gone.id}`);
  await created('/api/v1/nat', { nat_type: 'masquerade', interface: 'eth0', protocol: 'any' });
  await call('PUT', '/api/v1/rules/block-logging', { enabled: false });
  pending = (await call('GET', '/api/v1/pending')).body;
  assert.deepEqual(pending.changes.rules, { added: [], changed: [keep.id], removed: [gone.id] });
  assert.equal(pending.nat, true);
  assert.deepEqual(pending.changes.settings.changed, ['block-logging']);
  await call('POST', '/api/v1/reload');

  // Reordering is a change too: only the rule that moved is reported.
  const third = await created('/api/v1/rules', { action: 'block', direction: 'in', protocol: 'udp', label: 'third' });
  await call('POST', '/api/v1/reload');
  const ids = (await call('GET', '/api/v1/rules')).body.map((r: { id: string }) => r.id);
  assert.deepEqual(ids, [keep.id, third.id]);
  await call('PUT', '/api/v1/rules/reorder', { rule_ids: [third.id, keep.id] });
  pending = (await call('GET', '/api/v1/pending')).body;
  assert.equal(pending.changes.rules.added.length + pending.changes.rules.removed.length, 0);
  assert.equal(pending.changes.rules.changed.length, 2, 'both priorities changed');
  await call('POST', '/api/v1/reload');

  const status = await call('GET', '/api/v1/status');
  assert.equal(status.body.pf_rules, 2);
  const audit = api.t.app.context.db.prepare("SELECT actor, outcome FROM audit_log WHERE category = 'packet_filter' ORDER BY id DESC LIMIT 1").get() as { actor: string; outcome: string };
  assert.deepEqual(audit, { actor: 'admin', outcome: 'success' });
});

test('schedules are enforced by re-application when the local time crosses a boundary', async () => {
  const service = packetFilterOf(api.t.app);
  const simulated = api.t.app.context.platform.packetFilter as unknown as { appliedText: string };
  api.t.clock.set(new Date(2026, 0, 7, 10, 0).getTime()); // a Wednesday, 10:00 local time
  const office = await created('/api/v1/schedules', { name: 'mornings', time_ranges: '09:00-11:00', days_of_week: ['wed'] });
  const rule = await created('/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: 2222, schedule_id: office.id });
  assert.equal((await call('POST', '/api/v1/reload')).status, 200);
  assert.match(simulated.appliedText, new RegExp(`comment "rule ${rule.id}"`));
  assert.equal(await service.applySchedules(), false, 'nothing changes inside the window');
  api.t.clock.set(new Date(2026, 0, 7, 11, 30).getTime());
  assert.equal(await service.applySchedules(), true, 'leaving the window reloads');
  assert.doesNotMatch(simulated.appliedText, new RegExp(`comment "rule ${rule.id}"`));
  assert.match(simulated.appliedText, new RegExp(`# ${rule.id} not loaded: outside schedule "mornings"`));
  assert.equal((await call('GET', '/api/v1/pending')).body.firewall, false, 're-application is not a configuration change');
  api.t.clock.set(new Date(2026, 0, 14, 9, 15).getTime());
  assert.equal(await service.applySchedules(), true);
  assert.match(simulated.appliedText, new RegExp(`comment "rule ${rule.id}"`));
  await call('DELETE', `/api/v1/rules/${rule.id}`);
  await call('DELETE', `/api/v1/schedules/${office.id}`);
  await call('POST', '/api/v1/reload');
});

test('after a restart the last applied configuration is loaded again', async () => {
  const rule = await created('/api/v1/rules', { action: 'block', direction: 'in', protocol: 'udp', dst_port_start: 5353 });
  assert.equal((await call('POST', '/api/v1/reload')).status, 200);
  const second = await startTestApp({ dataDir: api.t.dataDir });
  try {
    const text = (second.app.context.platform.packetFilter as unknown as { appliedText?: string }).appliedText;
    assert.match(text ?? '', new RegExp(`comment "rule ${rule.id}"`));
  } finally {
    await second.close();
  }
  await call('DELETE', `/api/v1/rules/${rule.id}`);
});

test('anti-lockout is restricted to LAN-role interfaces once roles are set; a role change is pending until reload', async () => {
  assert.equal((await call('POST', '/api/v1/reload')).status, 200);
  const port = api.t.app.context.config.port;
  const antiLockout = (lines: string[]) => lines.find((l) => l.includes('anti-lockout') && l.includes(`dport ${port}`));
  assert.doesNotMatch(antiLockout((await call('GET', '/api/v1/rules/system')).body) ?? '', /iifname/, 'no roles: every interface');

  // A WAN role alone restricts nothing; only LAN-role interfaces count.
  assert.equal((await call('PUT', '/api/v1/interfaces/eth0/role', { role: 'wan' })).status, 200);
  assert.doesNotMatch(antiLockout((await call('GET', '/api/v1/rules/system')).body) ?? '', /iifname/);
  let pending = (await call('GET', '/api/v1/pending')).body;
  assert.equal(pending.firewall, false, 'a WAN role does not change the ruleset');

  assert.equal((await call('PUT', '/api/v1/interfaces/eth1/role', { role: 'lan' })).status, 200);
  const restricted = antiLockout((await call('GET', '/api/v1/rules/system')).body);
  assert.match(restricted ?? '', new RegExp(`^iifname "eth1" .*tcp dport ${port} accept comment "system: anti-lockout"$`), restricted);
  pending = (await call('GET', '/api/v1/pending')).body;
  assert.equal(pending.firewall, true);
  assert.deepEqual(pending.changes.settings, { added: [], changed: ['anti-lockout-interfaces'], removed: [] });

  // The pf dialect of the same stored configuration names the interface too.
  const service = packetFilterOf(api.t.app);
  const pfText = service.compile(service.storedSnapshot(), 'pf').text;
  assert.match(pfText, new RegExp(`pass in quick on eth1 (inet )?proto tcp from any to \\S+ port ${port} keep state label "bulwark:anti-lockout"`));

  // Applied only at reload; then the kernel's ruleset carries the restriction and nothing is pending.
  const simulated = api.t.app.context.platform.packetFilter as unknown as { appliedText: string };
  assert.doesNotMatch(simulated.appliedText, /iifname "eth1"[^\n]*anti-lockout/);
  assert.equal((await call('POST', '/api/v1/reload')).status, 200);
  assert.match(simulated.appliedText, new RegExp(`iifname "eth1" [^\\n]*tcp dport ${port} accept comment "system: anti-lockout"`));
  assert.equal((await call('GET', '/api/v1/pending')).body.firewall, false);

  // A second LAN (role names are compared without case) joins the set.
  assert.equal((await call('PUT', '/api/v1/interfaces/eth2/role', { role: 'LAN' })).status, 200);
  assert.match(antiLockout((await call('GET', '/api/v1/rules/system')).body) ?? '', /^iifname \{ "eth1", "eth2" \} /);
  assert.deepEqual((await call('GET', '/api/v1/pending')).body.changes.settings.changed, ['anti-lockout-interfaces']);
  // Changing it back to WAN leaves the applied set again: nothing pending.
  assert.equal((await call('PUT', '/api/v1/interfaces/eth2/role', { role: 'wan' })).status, 200);
  assert.equal((await call('GET', '/api/v1/pending')).body.firewall, false);
});

test('an applied snapshot written before anti-lockout interfaces existed means "every interface", not a change', () => {
  const old = emptySnapshot();
  assert.deepEqual(old.settings, { block_logging: true });
  const stored = { ...emptySnapshot(), settings: { block_logging: true, anti_lockout_interfaces: [] } };
  assert.deepEqual(pendingReport(stored, old, null).changes.settings.changed, []);
  const lan = { ...stored, settings: { block_logging: false, anti_lockout_interfaces: ['eth1'] } };
  assert.deepEqual(pendingReport(lan, old, null).changes.settings.changed, ['block-logging', 'anti-lockout-interfaces']);
  assert.equal(pendingReport(lan, old, null).firewall, true);
});

test('WAN default block: off on simulated, on where the platform is real; when on, what enters a WAN-role interface is blocked unless a rule passes it (system rules, pending, simulate, the applied text)', async () => {
  assert.deepEqual((await call('GET', '/api/v1/rules/wan-default-block')).body, { enabled: false }, 'npm start (simulated) keeps the open default');
  const real = await startAreaApp({ platform: { ...createSimulatedPlatform(), simulated: false } });
  try {
    const answer = await real.app.inject({ method: 'GET', url: '/api/v1/rules/wan-default-block', headers: real.headers });
    assert.deepEqual(json(answer), { enabled: true }, 'a real platform starts with it on');
  } finally {
    await real.close();
  }

  // No user rule left by earlier tests: the default policy decides.
  for (const rule of (await call('GET', '/api/v1/rules')).body as { id: string }[]) await call('DELETE', `/api/v1/rules/${rule.id}`);
  assert.equal((await call('PUT', '/api/v1/interfaces/eth0/role', { role: 'WAN' })).status, 200);
  assert.equal((await call('PUT', '/api/v1/interfaces/eth1/role', { role: 'lan' })).status, 200);
  assert.equal((await call('PUT', '/api/v1/interfaces/eth2/role', { role: 'dmz' })).status, 200);
  assert.equal((await call('POST', '/api/v1/reload')).status, 200);
  const wanBlock = (lines: string[]) => lines.filter((l) => l.includes('WAN default block'));
  assert.deepEqual(wanBlock((await call('GET', '/api/v1/rules/system')).body), [], 'off: nothing blocked by default');

  assert.deepEqual((await call('PUT', '/api/v1/rules/wan-default-block', { enabled: true })).body, { enabled: true });
  const lines = wanBlock((await call('GET', '/api/v1/rules/system')).body);
  assert.ok(lines.some((l) => /^iifname "eth0" counter (log prefix "bulwark block wan-default: " group \d+ )?drop comment "system: WAN default block"$/.test(l)), lines.join('\n'));
  const pending = (await call('GET', '/api/v1/pending')).body;
  assert.equal(pending.firewall, true);
  assert.ok(pending.changes.settings.changed.includes('wan-default-block'), JSON.stringify(pending.changes.settings));
  const packet = { interface: 'eth0', direction: 'in', protocol: 'tcp', src: '198.51.100.9', dst: '192.0.2.1', src_port: 40000, dst_port: 22, ruleset: 'stored' };
  const blocked = (await call('POST', '/api/v1/rules/simulate', packet)).body;
  assert.deepEqual([blocked.verdict, blocked.decided_by], ['block', { type: 'default', policy: 'block' }]);
  assert.equal((await call('POST', '/api/v1/rules/simulate', { ...packet, interface: 'eth1', src: '192.168.1.9' })).body.verdict, 'pass', 'LAN is not affected');

  const simulated = api.t.app.context.platform.packetFilter as unknown as { appliedText: string };
  assert.doesNotMatch(simulated.appliedText, /WAN default block/, 'applied only at reload');
  assert.equal((await call('POST', '/api/v1/reload')).status, 200);
  assert.match(simulated.appliedText, /iifname "eth0" counter [^\n]*drop comment "system: WAN default block"/);
  const service = packetFilterOf(api.t.app);
  assert.match(service.compile(service.storedSnapshot(), 'pf').text, /^block in (log )?on eth0 all label "bulwark:wan-default-block"$/m);

  // A rule passing the port wins over the default block, in the simulator as in both compilers.
  const rule = await created('/api/v1/rules', { action: 'pass', direction: 'in', interface: 'eth0', protocol: 'tcp', dst_port_start: 22, dst_port_end: 22 });
  assert.equal((await call('POST', '/api/v1/rules/simulate', packet)).body.decided_by.type, 'rule');
  await call('DELETE', `/api/v1/rules/${rule.id}`);
  assert.deepEqual((await call('PUT', '/api/v1/rules/wan-default-block', { enabled: false })).body, { enabled: false });
  assert.equal((await call('POST', '/api/v1/rules/simulate', packet)).body.verdict, 'pass');
  assert.equal((await call('POST', '/api/v1/reload')).status, 200);
});
