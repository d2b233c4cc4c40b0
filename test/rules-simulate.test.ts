/**
 * POST /api/v1/rules/simulate through the HTTP interface (simulated platform): verdict, NAT, the rule-by-rule
 * trace (aliases, schedules, quick and last match), the applied/stored rulesets and every refusal.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adminApi } from './helpers/admin-api.js';

const api = adminApi();
const { call, created } = api;

const simulate = async (packet: Record<string, unknown>) => {
  const answer = await call('POST', '/api/v1/rules/simulate', { ruleset: 'stored', ...packet });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body;
};
const web = { interface: 'wan0', direction: 'in', protocol: 'tcp', src: '198.51.100.7', dst: '10.0.0.80', src_port: 40000, dst_port: 443 };

test('the trace explains alias expansion, quick and last match, and the deciding rule', async () => {
  const alias = await created('/api/v1/aliases', { name: 'webservers', alias_type: 'host', entries: ['10.0.0.80', '10.0.0.81'] });
  const blockAll = await created('/api/v1/rules', { action: 'block', direction: 'in', protocol: 'any', quick: false, priority: 10 });
  const passWeb = await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', dst_addr: '<webservers>', dst_port_start: 443, quick: false, priority: 20 });
  const sshOnly = await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: 22, priority: 30 });
  const outOnly = await created('/api/v1/rules', { action: 'block', direction: 'out', protocol: 'any', priority: 40 });

  const result = await simulate(web);
  assert.equal(result.verdict, 'pass');
  assert.deepEqual(result.decided_by, { type: 'rule', rule_id: passWeb.id, quick: false });
  const byId = new Map(result.rules.map((r: { rule_id: string }) => [r.rule_id, r]));
  const overridden: any = byId.get(blockAll.id);
  assert.equal(overridden.outcome, 'matched_overridden');
  assert.match(overridden.reason, new RegExp(`later match ${passWeb.id} decides`));
  const decider: any = byId.get(passWeb.id);
  assert.equal(decider.outcome, 'decides');
  assert.ok(decider.matched_on.includes('destination 10.0.0.80 is in alias <webservers> through 10.0.0.80/31'), JSON.stringify(decider.matched_on));
  assert.match((byId.get(sshOnly.id) as any).reason, /destination port 443 is outside 22/);
  assert.match((byId.get(outOnly.id) as any).reason, /the packet goes in; the rule matches out/);

  // Another address falls through to the last matching non-quick block rule.
  const other = await simulate({ ...web, dst: '10.0.0.99' });
  assert.equal(other.verdict, 'block');
  assert.deepEqual(other.decided_by, { type: 'rule', rule_id: blockAll.id, quick: false });
  assert.match((other.rules.find((r: any) => r.rule_id === passWeb.id)).reason, /destination 10\.0\.0\.99 is not in alias <webservers> \(its set: 1 block\)/);

  // A quick rule stops evaluation: later rules are not reached.
  const ssh = await simulate({ ...web, dst_port: 22 });
  assert.deepEqual(ssh.decided_by, { type: 'rule', rule_id: sshOnly.id, quick: true });
  assert.equal(ssh.rules.find((r: any) => r.rule_id === outOnly.id).outcome, 'not_reached');
  for (const rule of [blockAll, passWeb, sshOnly, outOnly]) assert.equal((await call('DELETE', `/api/v1/rules/${rule.id}`)).status, 204);
  assert.equal((await call('DELETE', `/api/v1/aliases/${alias.id}`)).status, 204);
});

test('nothing matching: the default policy passes; a schedule decides by the time asked about', async () => {
  assert.deepEqual((await simulate(web)).decided_by, { type: 'default', policy: 'pass' });
  const office = await created('/api/v1/schedules', { name: 'office', time_ranges: '09:00-17:00', days_of_week: 'mon,tue,wed,thu,fri' });
  const rule = await created('/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: 443, schedule_id: office.id });
  const wednesdayMorning = new Date(2026, 0, 7, 10, 0).toISOString();
  const wednesdayEvening = new Date(2026, 0, 7, 18, 30).toISOString();
  const inside = await simulate({ ...web, at: wednesdayMorning });
  assert.equal(inside.verdict, 'block');
  assert.equal(inside.local_time, 'wed 10:00');
  assert.ok(inside.rules[0].matched_on.includes('schedule "office" is active at wed 10:00'));
  const outside = await simulate({ ...web, at: wednesdayEvening });
  assert.equal(outside.verdict, 'pass');
  assert.deepEqual(outside.rules[0], { rule_id: rule.id, priority: 100, action: 'block', quick: true, outcome: 'not_loaded', reason: 'outside its schedule "office" at wed 18:30' });
  assert.equal((await call('DELETE', `/api/v1/rules/${rule.id}`)).status, 204);
  assert.equal((await call('DELETE', `/api/v1/schedules/${office.id}`)).status, 204);
});

test('destination NAT is applied before the filter, which sees the translated packet', async () => {
  const forward = await created('/api/v1/nat', { nat_type: 'dnat', interface: 'wan0', protocol: 'tcp', dst_addr: '203.0.113.5', dst_port_start: 8443, redirect_addr: '10.0.0.80', redirect_port_start: 443 });
  const rule = await created('/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_addr: '10.0.0.80', dst_port_start: 443 });
  const result = await simulate({ ...web, dst: '203.0.113.5', dst_port: 8443 });
  assert.deepEqual(result.nat, {
    rule_id: forward.id, nat_type: 'dnat',
    before: { src: '198.51.100.7', src_port: 40000, dst: '203.0.113.5', dst_port: 8443 },
    after: { src: '198.51.100.7', src_port: 40000, dst: '10.0.0.80', dst_port: 443 },
    changed: ['dst_addr', 'dst_port'],
  });
  assert.deepEqual(result.decided_by, { type: 'rule', rule_id: rule.id, quick: true });
  assert.equal(result.verdict, 'block');
  // Another interface: no translation, and the rule does not see 10.0.0.80.
  const elsewhere = await simulate({ ...web, interface: 'lan0', dst: '203.0.113.5', dst_port: 8443 });
  assert.equal(elsewhere.nat, null);
  assert.equal(elsewhere.verdict, 'pass');
  assert.equal((await call('DELETE', `/api/v1/rules/${rule.id}`)).status, 204);
  assert.equal((await call('DELETE', `/api/v1/nat/${forward.id}`)).status, 204);
});

test('the applied ruleset is the default: 409 before any reload, then what was applied (not the pending change)', async () => {
  const before = await call('POST', '/api/v1/rules/simulate', web);
  assert.equal(before.status, 409);
  assert.match(before.body.error, /nothing has been applied yet/);
  assert.equal((await call('POST', '/api/v1/reload')).status, 200);
  const rule = await created('/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp' });
  const applied = await call('POST', '/api/v1/rules/simulate', web);
  assert.equal(applied.status, 200);
  assert.equal(applied.body.ruleset, 'applied');
  assert.equal(applied.body.verdict, 'pass', 'the new block rule is pending, not applied');
  assert.equal((await simulate(web)).verdict, 'block', 'the stored configuration blocks');
  assert.equal((await call('DELETE', `/api/v1/rules/${rule.id}`)).status, 204);
});

test('bad packets are 400s naming the field', async () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ ...web, src: '10.0.0.300' }, /body\.src: "10\.0\.0\.300" is not an IPv4 or IPv6 address/],
    [{ ...web, dst: '2001:db8::1' }, /body\.dst: IPv6 destination with an IPv4 source/],
    [{ ...web, dst_port: undefined }, /body\.dst_port is required for protocol tcp/],
    [{ ...web, protocol: 'icmp' }, /body\.src_port: protocol icmp has no ports/],
    [{ ...web, dst_port: 70000 }, /body\.dst_port must be <= 65535/],
    [{ ...web, direction: 'sideways' }, /body\.direction must be one of/],
    [{ ...web, interface: 'bad name;' }, /body\.interface must be/],
    [{ ...web, at: 'yesterday' }, /body\.at/],
    [{ ...web, extra: 1 }, /body\.extra|must not have additional/],
  ];
  for (const [payload, message] of cases) await api.refused('POST', '/api/v1/rules/simulate', { ruleset: 'stored', ...payload }, message);
});

test('source NAT on the way out: the filter sees the translated source; binat maps both ways', async () => {
  const snat = await created('/api/v1/nat', { nat_type: 'snat', interface: 'wan0', protocol: 'udp', src_addr: '10.0.0.0/24', redirect_addr: '203.0.113.9' });
  const binat = await created('/api/v1/nat', { nat_type: 'binat', interface: 'wan0', protocol: 'any', src_addr: '10.0.1.5', redirect_addr: '203.0.113.50' });
  const rule = await created('/api/v1/rules', { action: 'block', direction: 'out', protocol: 'udp', src_addr: '203.0.113.9' });
  const out = await simulate({ interface: 'wan0', direction: 'out', protocol: 'udp', src: '10.0.0.20', dst: '198.51.100.1', src_port: 5000, dst_port: 53 });
  assert.equal(out.nat.rule_id, snat.id);
  assert.deepEqual(out.nat.changed, ['src_addr']);
  assert.equal(out.filtered.src, '203.0.113.9');
  assert.deepEqual(out.decided_by, { type: 'rule', rule_id: rule.id, quick: true });
  // The inside host of the binat leaves as its outside address, and the outside address reaches it.
  const leaving = await simulate({ interface: 'wan0', direction: 'out', protocol: 'tcp', src: '10.0.1.5', dst: '198.51.100.1', src_port: 5000, dst_port: 443 });
  assert.deepEqual([leaving.nat.rule_id, leaving.filtered.src], [binat.id, '203.0.113.50']);
  const arriving = await simulate({ interface: 'wan0', direction: 'in', protocol: 'tcp', src: '198.51.100.1', dst: '203.0.113.50', src_port: 443, dst_port: 22 });
  assert.deepEqual([arriving.nat.rule_id, arriving.filtered.dst], [binat.id, '10.0.1.5']);
  for (const [kind, id] of [['rules', rule.id], ['nat', snat.id], ['nat', binat.id]]) assert.equal((await call('DELETE', `/api/v1/${kind}/${id}`)).status, 204);
});
