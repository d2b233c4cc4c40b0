/**
 * Issue 31 item 9: a full reload of the nftables table loses no counted packet. Three network namespaces this test
 * creates (client — firewall — server); Bulwark in this process with its nftables driver loading through a
 * libnftables session inside the firewall namespace, as the product does. A client streams UDP datagrams through
 * the firewall without pause, to a port a rule passes and to one a rule blocks, while the table is reloaded in full
 * several times (each made a full load by drift: a chain added by hand). Afterwards each rule's counter — the
 * kernel's own and GET /rules' hits — equals exactly the number of datagrams sent to its port, no blocked datagram
 * ever reached the server, and the counter of a rule deleted on the way is gone from the kernel.
 * Needs root; mandatory under REQUIRE_SYSTEM_TESTS=1.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { systemSkip } from '../helpers/system-skip.js';
import { buildThreeNamespaces, inNs, removeNamespaces, toolsInNamespace } from '../helpers/three-namespaces.js';
import { apiCalls } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';
import type { Headers } from '../helpers/auth.js';
import { areaOf, packetFilterOf } from '../helpers/areas.js';
import { createSimulatedPlatform } from '../../src/platform/simulated/index.js';
import { NftablesPacketFilter } from '../../src/platform/linux/packet-filter.js';
import { NftSession } from '../../src/platform/linux/nft-session.js';
import type { createPacketFilterArea } from '../../src/areas/packet-filter/routes.js';

const skip = systemSkip('the full-reload counter test (network namespaces, nftables)', { root: true, programs: ['ip', 'nft', 'conntrack', 'python3'] });
const NS = { client: `crlc${process.pid}`, firewall: `crlf${process.pid}`, server: `crls${process.pid}` };
const CLIENT = '10.247.1.2';
const FW_OUTSIDE = '10.247.1.1';
const FW_INSIDE = '10.247.2.1';
const SERVER = '10.247.2.2';
const PASS_PORT = 7000;
const BLOCK_PORT = 7001;
const FULL_RELOADS = 4;

/** Counts the datagrams that reach each port; prints the counts as JSON when stdin closes. */
const RECEIVER = `
const dgram = require('node:dgram');
const got = {};
for (const port of [${PASS_PORT}, ${BLOCK_PORT}]) {
  got[port] = 0;
  const s = dgram.createSocket({ type: 'udp4', recvBufferSize: 8 * 1024 * 1024 });
  s.on('message', () => got[port]++);
  s.bind(port, '0.0.0.0');
}
process.stdin.on('end', () => { console.log(JSON.stringify(got)); process.exit(0); }).resume();
console.log('ready');
`;
/**
 * One datagram to each port about every millisecond until stdin closes; then the number of each the kernel took
 * (send without error) as JSON. The server never answers, so each datagram meets the rules as a new connection.
 */
const SENDER = `
const dgram = require('node:dgram');
const s = dgram.createSocket('udp4');
let running = true;
process.stdin.on('end', () => { running = false; }).resume();
const sent = { ${PASS_PORT}: 0, ${BLOCK_PORT}: 0 };
const send = (port) => new Promise((resolve) => s.send('x', port, '${SERVER}', (error) => { if (!error) sent[port]++; resolve(); }));
(async () => {
  while (running) {
    await send(${PASS_PORT});
    await send(${BLOCK_PORT});
    await new Promise((r) => setTimeout(r, 1));
  }
  console.log(JSON.stringify(sent));
  process.exit(0);
})();
`;

const work = mkdtempSync(join(tmpdir(), 'bulwark-e2e-crl-'));
const children: ChildProcess[] = [];
let t: AreaApp;
let headers: Headers;
let packetFilter: NftablesPacketFilter;
const { call, ok } = apiCalls(() => ({ app: t.app, headers }));

before(async () => {
  if (skip) return;
  buildThreeNamespaces(NS, { client: CLIENT, firewallOutside: [FW_OUTSIDE], firewallInside: FW_INSIDE, server: [SERVER] });
  const tools = toolsInNamespace(work, NS.firewall);
  const platform = createSimulatedPlatform();
  const session = new NftSession(['ip', 'netns', 'exec', NS.firewall, '/usr/bin/python3']);
  packetFilter = new NftablesPacketFilter(() => platform.packetFilter.status(), tools.nft, tools.conntrack, tools.ip, session);
  t = await startAreaApp({ platform: { ...platform, packetFilter }, config: { driftCheckSeconds: 0 } });
  headers = t.headers;
});

after(async () => {
  for (const child of children) child.kill('SIGTERM');
  await t?.close();
  await packetFilter?.close();
  removeNamespaces(NS);
  rmSync(work, { recursive: true, force: true });
});

/** A child in a namespace whose stdout lines arrive one by one; closing its stdin asks it to finish. */
function started(ns: string, script: string) {
  const child = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const nextLine = async () => {
    const { value, done } = await lines.next();
    assert.ok(!done, 'the child ended without a line');
    return value as string;
  };
  return { nextLine, finish: async () => {
    child.stdin!.end();
    return JSON.parse(await nextLine()) as Record<string, number>;
  } };
}

/** The kernel's counter object `rule_<id>` (packets), or undefined when the table holds none of that name. */
function kernelCounter(ruleId: string): number | undefined {
  const listed = JSON.parse(inNs(NS.firewall, 'nft', '-j', 'list', 'counters', 'table', 'inet', 'bulwark')) as { nftables: { counter?: { name: string; packets: number } }[] };
  return listed.nftables.find((item) => item.counter?.name === `rule_${ruleId}`)?.counter?.packets;
}

async function pollUntil<T>(read: () => T | Promise<T>, done: (value: T) => boolean, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('traffic streams through several full reloads: each rule\'s counter equals exactly the packets sent to it; a deleted rule\'s counter goes', { skip, timeout: 300_000 }, async (context) => {
  const rule = (port: number, action: string) => ok('POST', '/api/v1/rules', { action, direction: 'in', interface: 'fwc', protocol: 'udp', dst_port_start: port, quick: true });
  const block = await rule(BLOCK_PORT, 'blockdrop');
  const pass = await rule(PASS_PORT, 'pass');
  const doomed = await rule(9, 'blockdrop');
  const reload = async () => (await ok('POST', '/api/v1/reload')).apply_mode as 'delta' | 'full';
  await reload();
  assert.equal(kernelCounter(doomed.id), 0, 'the doomed rule has its counter while it is loaded');

  const receiver = started(NS.server, RECEIVER);
  assert.equal(await receiver.nextLine(), 'ready');
  const sender = started(NS.client, SENDER);
  // Traffic flows before the first reload and between every two: each reload meets packets in flight.
  const flowed = async (more: number) => {
    const from = kernelCounter(pass.id) ?? 0;
    const reached = await pollUntil(() => kernelCounter(pass.id) ?? 0, (n) => n >= from + more, 20_000);
    assert.ok(reached >= from + more, `traffic flows: ${from} → ${reached}`);
  };
  await flowed(50);
  const service = packetFilterOf(t.app);
  for (let round = 0; round < FULL_RELOADS; round++) {
    if (round === 1) assert.equal((await call('DELETE', `/api/v1/rules/${doomed.id}`)).status, 204);
    // A chain added by hand is drift, and the next reload loads the whole table (and removes the chain).
    inNs(NS.firewall, 'nft', 'add', 'chain', 'inet', 'bulwark', `crl_stray_${round}`);
    await service.checkDrift();
    assert.equal(await reload(), 'full', `round ${round}: a full load`);
    assert.doesNotMatch(inNs(NS.firewall, 'nft', 'list', 'chains', 'inet'), /crl_stray_/, 'the full load removed the hand-made chain');
    await flowed(50);
  }
  const sent = await sender.finish();
  assert.ok(sent[PASS_PORT] > 0 && sent[BLOCK_PORT] > 0, JSON.stringify(sent));
  context.diagnostic(`${FULL_RELOADS} full reloads while ${sent[PASS_PORT]} datagrams went to the passed port and ${sent[BLOCK_PORT]} to the blocked one`);

  // The last datagrams are counted as they cross the firewall: once the kernel's counter holds them all, so must the hits.
  await pollUntil(() => kernelCounter(pass.id), (n) => n === sent[PASS_PORT], 5000);
  await areaOf<ReturnType<typeof createPacketFilterArea>>(t.app, 'packet-filter').hits.sample();
  const rules = (await call('GET', '/api/v1/rules')).body as { id: string; hits: { packets: number } }[];
  const hits = (id: string) => rules.find((r) => r.id === id)!.hits.packets;
  assert.deepEqual({ pass: hits(pass.id), block: hits(block.id) }, { pass: sent[PASS_PORT], block: sent[BLOCK_PORT] }, 'GET /rules counted every datagram sent to each port across the full reloads, none lost or counted twice');
  assert.equal(kernelCounter(pass.id), sent[PASS_PORT], 'the kernel\'s own counter kept every datagram too');
  assert.equal(kernelCounter(block.id), sent[BLOCK_PORT]);
  assert.equal(kernelCounter(doomed.id), undefined, 'the deleted rule\'s counter went with it');

  const arrived = await receiver.finish();
  assert.equal(arrived[BLOCK_PORT], 0, 'no blocked datagram reached the server during any reload');
  assert.ok(arrived[PASS_PORT] > 0, JSON.stringify(arrived));
});
