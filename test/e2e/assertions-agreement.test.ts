/**
 * Transit assertions agree with the kernel (issue 33). Twenty random transit assertions (a client address to a
 * server address, tcp or udp, a port) and a random ruleset go through the HTTP API; then a hundred random rule
 * changes (create, update, delete), each applied with force=true and checked as a commit-confirm window checks it:
 * the kernel read back, every transit assertion judged against what it holds. After each apply, every assertion's
 * packet is sent for real from the client namespace through the firewall namespace (nftables, loaded by the
 * driver) to the server namespace, where a receiver prints what arrived: the assertion's outcome (`pass` or
 * `block`) must equal what the kernel did. The namespaces, receiver and sender are those of the simulator
 * agreement suite (test/helpers/three-namespaces.ts, test/helpers/agreement-traffic.ts).
 * Needs root; mandatory under REQUIRE_SYSTEM_TESTS=1. B33_SEED=<n> repeats a run.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { systemSkip } from '../helpers/system-skip.js';
import { agreementLab, generator } from '../helpers/agreement-traffic.js';
import { areaOf } from '../helpers/areas.js';
import type { createAssertionsArea } from '../../src/areas/assertions/routes.js';

const skip = systemSkip('the assertion agreement test (network namespaces, nftables)', { root: true, programs: ['ip', 'nft', 'conntrack'] });
const NET = '10.233';
const CLIENTS = Array.from({ length: 6 }, (_, i) => `${NET}.1.${10 + i}`);
const SERVERS = Array.from({ length: 6 }, (_, i) => `${NET}.2.${10 + i}`);
const ASSERTIONS = 20;
const CHANGES = 100;
const INITIAL_RULES = 12;
const SEED = Number(process.env.B33_SEED ?? Math.floor(Math.random() * 2 ** 31));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const lab = agreementLab({ prefix: 'b33', net: NET, clients: CLIENTS, servers: SERVERS });
const { call } = lab;

before(async () => {
  if (!skip) await lab.setUp();
});

after(() => lab.tearDown());

/** A random rule (no source ports: the real probes leave from a fresh source port each round). */
function randomRule(random: ReturnType<typeof generator>, priority: number): Record<string, unknown> {
  const protocol = random.pick(['tcp', 'udp', 'tcp/udp', 'any']);
  const rule: Record<string, unknown> = {
    action: random.pick(['pass', 'pass', 'block', 'blockdrop', 'blockreturn']),
    direction: random.pick(['in', 'out', 'any']),
    interface: random.pick([null, 'fwc', 'fws']),
    protocol,
    quick: random.chance(0.5),
    src_addr: random.pick(['any', 'any', random.pick(CLIENTS), `${NET}.1.8/29`, `${NET}.1.12/30`, '<b33cl>']),
    dst_addr: random.pick(['any', 'any', random.pick(SERVERS), `${NET}.2.8/29`, `${NET}.2.12-${NET}.2.14`]),
    priority,
  };
  const start = random.int(1000, 1040);
  // null: an update clears the ports of the rule it replaces.
  Object.assign(rule, protocol !== 'any' && random.chance(0.6) ? { dst_port_start: start, dst_port_end: start + random.int(0, 40) } : { dst_port_start: null, dst_port_end: null });
  // nftables refuses `reject` after routing: block-return is for inbound rules only (docs/packet-filter.md).
  if (rule.action === 'blockreturn' && rule.direction !== 'in') rule.action = 'block';
  return rule;
}

test('100 random rule changes against 20 random transit assertions: each assertion\'s outcome after the apply equals what the kernel does to its packet', { skip, timeout: 600_000 }, async (context) => {
  context.diagnostic(`seed ${SEED} (B33_SEED=${SEED} repeats this run)`);
  const random = generator(SEED);
  const created = async (url: string, payload: unknown) => {
    const answer = await call('POST', url, payload);
    assert.equal(answer.status, 201, `seed ${SEED}: ${url} ${JSON.stringify(payload)} → ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  await created('/api/v1/aliases', { name: 'b33cl', alias_type: 'host', entries: CLIENTS.filter(() => random.chance(0.5)) });
  const assertions: { id: string; protocol: 'tcp' | 'udp'; src: string; dst: string; port: number }[] = [];
  for (let i = 0; i < ASSERTIONS; i++) {
    const a = { protocol: random.pick(['tcp', 'udp'] as const), src: random.pick(CLIENTS), dst: random.pick(SERVERS), port: random.int(1000, 1080) };
    const body = await created('/api/v1/assertions', { name: `a${i}`, kind: 'transit', interface: 'fwc', egress_interface: 'fws', protocol: a.protocol, source: a.src, destination: a.dst, port: a.port });
    assertions.push({ id: body.id, ...a });
  }
  const rules: string[] = [];
  for (let i = 0; i < INITIAL_RULES; i++) rules.push((await created('/api/v1/rules', randomRule(random, i * 10))).id);

  const { received } = await lab.startReceiver();

  const service = areaOf<ReturnType<typeof createAssertionsArea>>(lab.app(), 'assertions').service;
  const disagreements: string[] = [];
  /** Probes the assertions said are blocked: none may ever arrive (checked again after the last round). */
  const blocked: { id: string; what: string }[] = [];
  let passes = 0;
  let blocks = 0;
  for (let round = 0; round < CHANGES; round++) {
    const kind = rules.length === 0 ? 'create' : random.pick(['create', 'create', 'update', 'delete']);
    let change = '';
    if (kind === 'create') {
      const rule = randomRule(random, random.int(0, 200));
      rules.push((await created('/api/v1/rules', rule)).id);
      change = `create ${JSON.stringify(rule)}`;
    } else {
      const index = random.int(0, rules.length - 1);
      if (kind === 'update') {
        const rule = randomRule(random, random.int(0, 200));
        const answer = await call('PUT', `/api/v1/rules/${rules[index]}`, rule);
        assert.equal(answer.status, 200, `seed ${SEED}: ${JSON.stringify(answer.body)}`);
        change = `update ${rules[index]} to ${JSON.stringify(rule)}`;
      } else {
        assert.equal((await call('DELETE', `/api/v1/rules/${rules[index]}`)).status, 204);
        change = `delete ${rules[index]}`;
        rules.splice(index, 1);
      }
    }
    const reload = await call('POST', '/api/v1/reload?force=true');
    assert.equal(reload.status, 200, `seed ${SEED} round ${round}: ${JSON.stringify(reload.body)}`);
    const judged = new Map((await service.verifyApplied()).map((j) => [j.id, j.result]));

    const probes = assertions.map((a, i) => ({ id: `r${round}a${i}`, proto: a.protocol, src: a.src, sport: 20_000 + round * ASSERTIONS + i, dst: a.dst, dport: a.port }));
    await lab.send(probes);
    const expectPass = probes.filter((_, i) => judged.get(assertions[i].id)!.outcome === 'pass');
    // Every packet the assertions say passes must arrive (polled: the last datagrams may still be on their way).
    for (let waited = 0; expectPass.some((p) => !received.has(p.id)) && waited < 5000; waited += 50) await sleep(50);
    probes.forEach((probe, i) => {
      const result = judged.get(assertions[i].id)!;
      const what = `round ${round} (${change}): assertion ${JSON.stringify(assertions[i])} judged ${result.outcome} by ${result.decided_by} against ${result.against}`;
      if (result.outcome === 'error') disagreements.push(`${what}: ${result.detail}`);
      else if (result.outcome === 'pass') {
        passes++;
        if (!received.has(probe.id)) disagreements.push(`${what}; the kernel blocked it`);
      } else {
        blocks++;
        blocked.push({ id: probe.id, what });
      }
    });
  }
  await sleep(0);
  for (const { id, what } of blocked) if (received.has(id)) disagreements.push(`${what}; the kernel passed it`);
  context.diagnostic(`${CHANGES} changes × ${ASSERTIONS} assertions: ${passes} judged pass, ${blocks} judged block, ${disagreements.length} disagreements`);
  assert.ok(passes > 0 && blocks > 0, `seed ${SEED}: the changes must give both outcomes (${passes} pass, ${blocks} block)`);
  assert.deepEqual(disagreements.slice(0, 10), [], `seed ${SEED}: ${disagreements.length} disagreements`);
});
