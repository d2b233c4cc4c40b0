import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AliasData, RuleData, WithId } from '../src/compile/firewall-types.js';
import { createSimulatedPlatform } from '../src/platform/simulated/index.js';
import { NftablesPacketFilter } from '../src/platform/linux/packet-filter.js';
import { NftSession } from '../src/platform/linux/nft-session.js';
import { nftablesStatus } from '../src/platform/linux/nft-status.js';
import type { PacketFilterService } from '../src/areas/packet-filter/service.js';
import { nftDelta } from '../src/compile/nft-delta.js';
import { renderFullLoad, type NftTable } from '../src/compile/nft-table.js';
import { adminBearer, median, startServer, fmt, timedClient } from './harness.js';


/**
 * Applying through HTTP on the linux driver, into a network namespace this benchmark creates, each figure next to
 * a bare `nft -f` of the same text in the same namespace and run:
 *  - POST /reload replacing the whole table (after the table was flushed by hand: drift makes it a full load);
 *    target <= 1.1x the bare `nft -f`
 *  - one rule changed among 10,000, then POST /reload (a delta); target < 50 ms; and the same with the reload
 *    sent the moment the edit is answered, before the server has compiled ahead (no target: shown for scale)
 *  - an alias of 10,000 entries (10,000 set elements: no two merge) gaining one entry, then POST /reload (a
 *    delta); target < 20 ms
 * Each kind of delta runs 7 timed rounds after one untimed round (the whole table's rounds follow one load too).
 * Each delta is next to the same delta script (nftDelta of the tables before and after) loaded by a bare `nft -f`:
 * the kernel's and nft's own cost of that change. POST /reload is timed by a client in its own process, as a
 * client sees it (one in this process would also count the read-back the server starts after answering).
 */
export async function benchKernelApply(rules: readonly WithId<RuleData>[], aliases: readonly WithId<AliasData>[]): Promise<void> {
  const namespace = `b19bench${process.pid}`;
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-bench-apply-'));
  spawnSync('ip', ['netns', 'add', namespace]);
  writeFileSync(join(dir, 'nft'), `#!/bin/sh\nexec ip netns exec ${namespace} nft "$@"\n`);
  chmodSync(join(dir, 'nft'), 0o755);
  const simulated = createSimulatedPlatform();
  // As the product runs it: loads through a libnftables session (here inside the namespace), the CLI otherwise.
  const packetFilter = new NftablesPacketFilter(() => simulated.packetFilter.status(), join(dir, 'nft'), 'conntrack', 'ip', new NftSession(['ip', 'netns', 'exec', namespace, '/usr/bin/python3']));
  const server = await startServer({ platform: { ...simulated, packetFilter } });
  const client = await timedClient();
  const nft = (...args: string[]) => {
    const result = spawnSync('ip', ['netns', 'exec', namespace, 'nft', ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (result.status !== 0) throw new Error(result.stderr.slice(0, 500));
    return result.stdout;
  };
  try {
    const auth = await adminBearer(server.url);
    const { store } = server.app.context;
    const bigAlias = { name: 'big', alias_type: 'network', description: null, enabled: true, entries: Array.from({ length: 10_000 }, (_, i) => `10.${100 + (i >> 8)}.${i & 255}.0/25`) };
    let bigId = '';
    store.transaction(() => {
      for (const alias of aliases) store.insert('alias', alias.data as unknown as Record<string, unknown>);
      bigId = store.insert('alias', bigAlias).id;
      for (const rule of rules) store.insert('rule', rule.data as unknown as Record<string, unknown>, rule.id);
      store.insert('rule', { ...rules[1].data, priority: 10_001, rule_match: { ...rules[1].data.rule_match, src_addr: '<big>' } } as unknown as Record<string, unknown>);
    });
    const service = (server.app.areas.find((a) => a.name === 'packet-filter') as unknown as { service: PacketFilterService }).service;
    const reload = async () => {
      const { ms, status, body } = await client.request({ url: `${server.url}/api/v1/reload`, method: 'POST', headers: auth });
      if (status !== 200) throw new Error(`reload: ${status} ${body}`);
      return { ms, mode: (JSON.parse(body) as { apply_mode: string }).apply_mode };
    };
    const put = async (path: string, body: unknown) => {
      const response = await fetch(`${server.url}${path}`, { method: 'PUT', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (response.status !== 200) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    };
    const settle = () => service.checkDrift(); // waits for the read-back queued after the last load

    // The text a full load sends, loaded bare in the same namespace: the kernel's own cost.
    const text = service.compile(service.storedSnapshot()).text;
    writeFileSync(join(dir, 'full.nft'), text);
    const bare: number[] = [];
    const full: number[] = [];
    const modes = new Set<string>();
    await reload();
    await settle();
    for (let round = 0; round < 5; round++) {
      // Alternate, so drift in the machine's load hits both alike.
      let start = performance.now();
      nft('-f', join(dir, 'full.nft'));
      bare.push(performance.now() - start);
      nft('flush', 'ruleset'); // behind Bulwark's back: the check sees drift, the next reload loads in full
      await settle();
      const timed = await reload();
      full.push(timed.ms);
      modes.add(timed.mode);
      await settle();
    }
    console.log(`POST /reload, ${rules.length} rules / ${aliases.length + 1} aliases, whole table (${[...modes].join(',')}): ${fmt(median(full))} ms = ${fmt(median(full) / median(bare), 2)}x (target <= 1.1x)   baseline bare nft -f of the same ${(text.length / 1e6).toFixed(1)} MB: ${fmt(median(bare))} ms`);

    // The same with the table in place (drift: a chain added by hand), as after a restart or a large change: the
    // full load lists the table's objects and keeps its counters (renderFullLoad with the objects present).
    const kept: number[] = [];
    const keptModes = new Set<string>();
    for (let round = 0; round < 3; round++) {
      nft('add', 'chain', 'inet', 'bulwark', `bench_stray_${round}`);
      await settle();
      const timed = await reload();
      kept.push(timed.ms);
      keptModes.add(timed.mode);
      await settle();
    }
    console.log(`POST /reload, whole table over the loaded one (${[...keptModes].join(',')}; its objects listed, counters kept): ${fmt(median(kept))} ms = ${fmt(median(kept) / median(bare), 2)}x   baseline bare nft -f of the same text: ${fmt(median(bare))} ms`);

    // GET /status and each dashboard tick read the packet filter's status: the whole table's JSON before (the
    // baseline, as it was read), the counter objects now (a new driver each round: no listing shared).
    const statusNow: number[] = [];
    const statusBefore: number[] = [];
    for (let round = 0; round < 3; round++) {
      let start = performance.now();
      JSON.parse(nft('-j', 'list', 'table', 'inet', 'bulwark'));
      statusBefore.push(performance.now() - start);
      start = performance.now();
      const status = await nftablesStatus(new NftablesPacketFilter(async () => { throw new Error('unused'); }, join(dir, 'nft')));
      statusNow.push(performance.now() - start);
      if (!status.running) throw new Error(`status: ${status.error}`);
    }
    console.log(`packet-filter status (GET /status, dashboard tick) at ${rules.length} rules: ${fmt(median(statusNow))} ms (nft -j list counters)   baseline the whole table's JSON listed and parsed, as before: ${fmt(median(statusBefore))} ms`);

    // Each round: the change through the API, POST /reload timed; then the same delta script (the tables before
    // and after) timed bare, undone bare and redone bare, so the kernel ends where Bulwark left it.
    const table = () => service.compile(service.storedSnapshot()).nft!;
    const bareDelta = (before: NftTable, after: NftTable) => {
      // Undoing a large refill is no delta: the whole table then (untimed).
      writeFileSync(join(dir, 'undo.nft'), nftDelta(after, before)?.script ?? renderFullLoad(before));
      writeFileSync(join(dir, 'redo.nft'), nftDelta(before, after)!.script);
      nft('-f', join(dir, 'undo.nft'));
      const start = performance.now();
      nft('-f', join(dir, 'redo.nft'));
      return performance.now() - start;
    };
    // The first change of each kind is made untimed, as the whole table is loaded once before its rounds: the
    // code paths of that change are then compiled by the JIT, as in a server that has run for a while.
    // `atOnce`: the reload is sent as soon as the edit is answered, before the server compiles ahead (20 ms after
    // writes pause); otherwise after the read-back of the last load, as an administrator applies after editing.
    const rounds = async (count: number, change: (i: number) => Promise<void>, atOnce = false) => {
      // A fresh access token for each kind: on a loaded machine the rounds before outlast one.
      Object.assign(auth, await adminBearer(server.url));
      const api: number[] = [];
      const bare: number[] = [];
      const modes = new Set<string>();
      for (let i = 0; i <= count; i++) {
        const before = table();
        await change(i);
        if (!atOnce) await settle();
        const timed = await reload();
        await settle();
        const bareMs = bareDelta(before, table());
        await settle();
        if (i === 0) continue;
        api.push(timed.ms);
        bare.push(bareMs);
        modes.add(timed.mode);
      }
      return { api: median(api), bare: median(bare), modes: [...modes].join(',') };
    };
    const editable = rules.slice(5000).filter((r) => r.data.protocol === 'tcp' && !r.data.src_invert).slice(0, 8);
    const one = await rounds(editable.length - 1, (i) => put(`/api/v1/rules/${editable[i].id}`, { dst_port_start: 2000 + i }));
    console.log(`POST /reload after one rule changed among ${rules.length} (${one.modes}): ${fmt(one.api)} ms (target < 50 ms)   baseline bare nft -f of the same delta: ${fmt(one.bare)} ms`);
    const atOnce = await rounds(editable.length - 1, (i) => put(`/api/v1/rules/${editable[i].id}`, { dst_port_start: 3000 + i }), true);
    console.log(`  the same, POST /reload sent the moment the edit is answered (compile and hash on the request's path): ${fmt(atOnce.api)} ms   baseline bare nft -f of the same delta: ${fmt(atOnce.bare)} ms`);
    const entries = [...bigAlias.entries];
    const alias = await rounds(7, (i) => put(`/api/v1/aliases/${bigId}`, { entries: [...entries, ...Array.from({ length: i + 1 }, (_, k) => `192.0.2.${k * 2 + 1}`)] }));
    console.log(`POST /reload after an alias of 10,000 entries gained one (${alias.modes}): ${fmt(alias.api)} ms (target < 20 ms)   baseline bare nft -f of the same delta: ${fmt(alias.bare)} ms`);
  } finally {
    client.close();
    await server.stop();
    await packetFilter.close();
    spawnSync('ip', ['netns', 'delete', namespace]);
    rmSync(dir, { recursive: true, force: true });
  }
}
