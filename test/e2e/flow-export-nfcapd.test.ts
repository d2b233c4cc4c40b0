/**
 * Flow export proven from the collector's side: Bulwark (`--platform linux`) runs in a firewall namespace between
 * a client and a server; /settings/flow-export makes it run softflowd (Debian) on the client-side interface and
 * export IPFIX to nfcapd (Debian nfdump) in a collector namespace. The client sends a known number of bytes to
 * the server over TCP through the firewall; nfdump reads back the client→server flow with the right addresses,
 * ports, protocol, byte count (within 10 % of what iperf3 sent) and the interface's index. The collector's
 * private address has to be on the administrator's outbound allow-list first. With `sampling: 10` softflowd takes
 * one packet in ten and the collector receives exactly the packets taken, unscaled.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { findProgram } from '../../src/platform/daemon-tools.js';
import { systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';
import { NetnsLab, inNamespace } from '../helpers/netns-lab.js';
import { daemonLogWith } from '../helpers/daemon-log-file.js';

const skipReason = () => systemSkip('the flow-export namespace lab', { root: true, programs: ['ip', 'nft', 'softflowd', 'softflowctl', 'nfcapd', 'nfdump', 'iperf3', 'setpriv', 'promtool'], users: ['nobody'] });

const CLIENT = '10.236.1.2';
const SERVER = '10.236.2.2';
const COLLECTOR = '10.236.3.2';
const CLIENT_PORT = 41234;
const BYTES = 20 * 1024 * 1024;
// A paced transfer: this checks what is counted, not how fast a shared 2-core test machine can capture (bench/ does that).
const RATE = '200M';

test('softflowd under Bulwark exports the client→server TCP flow that nfcapd records with addresses, ports, bytes and interface index; sampling 1 in N exports one packet in N, unscaled', { skip: skipReason(), timeout: 240_000 }, async (t) => {
  const lab = new NetnsLab('fx');
  try {
    const fw = lab.namespace('fw');
    const client = lab.namespace('cl');
    const server = lab.namespace('sv');
    const collector = lab.namespace('co');
    const inside = `fxc${lab.tag}`.slice(0, 15);
    lab.link({ ns: client, name: `fxa${lab.tag}`.slice(0, 15), address: `${CLIENT}/24` }, { ns: fw, name: inside, address: '10.236.1.1/24' });
    lab.link({ ns: server, name: `fxb${lab.tag}`.slice(0, 15), address: `${SERVER}/24` }, { ns: fw, name: `fxs${lab.tag}`.slice(0, 15), address: '10.236.2.1/24' });
    lab.link({ ns: collector, name: `fxd${lab.tag}`.slice(0, 15), address: `${COLLECTOR}/24` }, { ns: fw, name: `fxk${lab.tag}`.slice(0, 15), address: '10.236.3.1/24' });
    inNamespace(client, 'ip', ['route', 'add', 'default', 'via', '10.236.1.1']);
    inNamespace(server, 'ip', ['route', 'add', 'default', 'via', '10.236.2.1']);
    inNamespace(fw, 'sysctl', ['-q', '-w', 'net.ipv4.ip_forward=1']);

    // The collector listens before the exporter starts (it must see IPFIX's template).
    const flows = join(lab.dataDir, 'nfcapd');
    mkdirSync(flows);
    const nfcapd = lab.spawnIn(collector, findProgram('nfcapd')!, ['-w', flows, '-b', COLLECTOR, '-p', '4739', '-t', '60']);
    lab.spawnIn(server, findProgram('iperf3')!, ['-s', '-B', SERVER, '-p', '5201']);
    lab.startBulwark(fw, await freePort());

    // Forwarding allowed whatever the starting policy.
    const rule = lab.call('POST', '/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: 5201, label: 'iperf' });
    lab.call('POST', '/api/v1/reload');

    const settings = { enabled: true, protocol: 'ipfix', collectors: [`${COLLECTOR}:4739`], interfaces: [inside], active_timeout_secs: 60, inactive_timeout_secs: 2 };
    // A private collector is refused until the administrator allow-lists it.
    const [refused] = lab.api(['PUT', '/api/v1/settings/flow-export', settings]);
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.match(refused.body.error, /collectors\.0: .*\/api\/v1\/settings\/outbound/);
    lab.call('PUT', '/api/v1/settings/outbound', { allowed_addresses: [`${COLLECTOR}/32`] });
    const view = lab.call('PUT', '/api/v1/settings/flow-export', settings);
    assert.equal(view.status.exporter, 'softflowd');
    assert.equal(view.status.running, true, JSON.stringify(view));
    const ifindex = Number(inNamespace(fw, 'cat', [`/sys/class/net/${inside}/ifindex`]).trim());
    assert.deepEqual(view.status.interfaces.map((i: { interface: string; ifindex: number; running: boolean }) => [i.interface, i.ifindex, i.running]), [[inside, ifindex, true]]);
    const pid = view.status.interfaces[0].pid;
    assert.equal(inNamespace(fw, 'ps', ['-o', 'user=', '-p', String(pid)]).trim(), 'nobody', 'softflowd runs as nobody');
    // softflowd's own lines are in the local log, named by interface.
    await daemonLogWith(lab.dataDir, 'softflowd', new RegExp(`^${inside}: softflowd v[\\d.]+ starting data collection`, 'm'));

    // A known transfer from a known port, client → server through the firewall.
    const transfer = async (clientPort: number) => {
      for (let attempt = 0; attempt < 20; attempt++) {
        try {
          return JSON.parse(inNamespace(client, findProgram('iperf3')!, ['-c', SERVER, '-p', '5201', '-n', String(BYTES), '-b', RATE, '--cport', String(clientPort), '-J'], { timeoutMs: 60_000 })).end.sum_sent.bytes as number;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 250)); // the server is still starting
        }
      }
      return 0;
    };
    // The flow ends (FIN) and is exported after the inactive timeout: softflowd's own control socket says when.
    const control = join(lab.runtimeRoot, 'softflowd', 'state', `if${ifindex}.ctl`);
    const softflowctl = (command: string) => inNamespace(fw, findProgram('softflowctl')!, ['-c', control, command]);
    /** softflowd's statistics once the transfer's flows and every other are exported (none active). */
    const exportedAll = async (clientPort: number) => {
      for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        const statistics = softflowctl('statistics');
        if (!softflowctl('dump-flows').includes(`:${clientPort}`) && /Number of active flows: 0\b/.test(statistics) && Number(/Flows exported: (\d+)/.exec(statistics)?.[1] ?? 0) >= 2) return statistics;
      }
      assert.fail(`the flows of client port ${clientPort} were not exported:\n${softflowctl('statistics')}`);
    };
    /** What nfcapd wrote, once it has stopped (it writes its file at exit): one field list per record. */
    const collected = async (collectorProcess: typeof nfcapd, dir: string) => {
      const exited = new Promise((resolve) => collectorProcess.once('exit', resolve));
      collectorProcess.kill('SIGTERM');
      await exited;
      return inNamespace(collector, findProgram('nfdump')!, ['-R', dir, '-q', '-N', '-o', 'fmt:%pr|%sa|%sp|%da|%dp|%pkt|%byt|%in|%out|%ts|%te'])
        .split('\n').map((line) => line.replace(/\s+/g, '')).filter(Boolean).map((line) => line.split('|'));
    };
    const sent = await transfer(CLIENT_PORT);
    assert.ok(sent >= BYTES, `iperf3 sent ${sent}`);
    const statistics = await exportedAll(CLIENT_PORT);
    const records = await collected(nfcapd, flows);
    const flow = records.find(([proto, sa, sp, da, dp]) => proto === '6' && sa === CLIENT && Number(sp) === CLIENT_PORT && da === SERVER && Number(dp) === 5201);
    assert.ok(flow, `the client→server flow is recorded:\n${records.join('\n')}`);
    const bytes = Number(flow[6]);
    assert.ok(Math.abs(bytes - sent) <= sent * 0.1, `bytes ${bytes} within 10 % of the ${sent} sent\n${statistics}`);
    assert.ok(Number(flow[5]) > 0, 'packets counted');
    assert.equal(Number(flow[7]), ifindex, 'the input interface index');
    const reverse = records.find(([proto, sa, sp, da, dp]) => proto === '6' && sa === SERVER && Number(sp) === 5201 && da === CLIENT && Number(dp) === CLIENT_PORT);
    assert.ok(reverse, 'the server→client direction too');

    // Sampling 1 in 10 (softflowd -s 10, periodic): softflowd counts every tenth packet it captures and exports the
    // counts as sampled (unscaled), so every exported packet is one softflowd took, and one in ten was taken.
    const sampledFlows = join(lab.dataDir, 'nfcapd-sampled');
    mkdirSync(sampledFlows);
    const sampledCollector = lab.spawnIn(collector, findProgram('nfcapd')!, ['-w', sampledFlows, '-b', COLLECTOR, '-p', '4739', '-t', '60']);
    for (const deadline = Date.now() + 20_000; Date.now() < deadline && !inNamespace(collector, 'ss', ['-uln']).includes(`${COLLECTOR}:4739`);) await new Promise((resolve) => setTimeout(resolve, 200));
    const sampledView = lab.call('PUT', '/api/v1/settings/flow-export', { ...settings, sampling: 10 });
    assert.equal(sampledView.config.sampling, 10);
    assert.equal(sampledView.status.running, true, JSON.stringify(sampledView));
    assert.match(inNamespace(fw, 'ps', ['-o', 'args=', '-p', String(sampledView.status.interfaces[0].pid)]), / -s 10( |$)/);
    const sampledPort = CLIENT_PORT + 1;
    const sampledSent = await transfer(sampledPort);
    const sampledStatistics = await exportedAll(sampledPort);
    const taken = Number(/Packets processed: (\d+)/.exec(sampledStatistics)?.[1]);
    const skipped = Number(/Packets non-sampled: (\d+)/.exec(sampledStatistics)?.[1]);
    assert.ok(skipped > 0 && Math.abs(taken - Math.round((taken + skipped) / 10)) <= 1, `one packet in ten taken:\n${sampledStatistics}`);
    const sampledRecords = await collected(sampledCollector, sampledFlows);
    assert.equal(sampledRecords.reduce((sum, record) => sum + Number(record[5]), 0), taken, `every exported packet is a sampled one, unscaled:\n${sampledRecords.join('\n')}\n${sampledStatistics}`);
    const sampledFlow = sampledRecords.find(([proto, sa, sp, da, dp]) => proto === '6' && sa === CLIENT && Number(sp) === sampledPort && da === SERVER && Number(dp) === 5201);
    assert.ok(sampledFlow && Number(sampledFlow[5]) > 0, `the sampled client→server flow is recorded:\n${sampledRecords.join('\n')}`);
    assert.ok(Number(sampledFlow[6]) < sampledSent / 4, `its bytes are the sampled packets' (${sampledFlow[6]} of ${sampledSent} sent): the collector scales by N`);
    t.diagnostic(`sampling 10: ${taken} of ${taken + skipped} packets taken; client→server flow ${sampledFlow[5]} packets, ${sampledFlow[6]} of ${sampledSent} bytes; nfdump -E:\n${readdirSync(sampledFlows).filter((name) => name.startsWith('nfcapd.2')).map((name) => inNamespace(collector, findProgram('nfdump')!, ['-E', join(sampledFlows, name)])).join('\n')}`);

    // The Prometheus exposition of the real platform passes promtool, and the rule's counter there is GET /rules'.
    const [rules, metrics] = lab.api(['GET', '/api/v1/rules'], ['GET', '/api/v1/metrics/prometheus']);
    assert.equal(metrics.status, 200);
    const checked = spawnSync(findProgram('promtool')!, ['check', 'metrics'], { input: metrics.body, encoding: 'utf8' });
    assert.equal(checked.status, 0, `${checked.stdout}${checked.stderr}`);
    const hits = rules.body.find((r: { id: string }) => r.id === rule.id).hits;
    const sampleOf = (name: string) => Number(new RegExp(`^${name}\\{rule_id="${rule.id}"\\} (\\S+)$`, 'm').exec(metrics.body)?.[1]);
    assert.equal(sampleOf('bulwark_rule_hits_packets_total'), hits.packets);
    assert.equal(sampleOf('bulwark_rule_hits_bytes_total'), hits.bytes);
    assert.match(metrics.body, /^bulwark_pf_running 1$/m);

    // Off: the exporter stops.
    const off = lab.call('PUT', '/api/v1/settings/flow-export', { enabled: false });
    assert.equal(off.status.running, false);
    assert.equal(inNamespace(fw, 'sh', ['-c', `kill -0 ${pid} 2>/dev/null && echo alive || echo gone`]).trim(), 'gone');
  } finally {
    await lab.cleanup();
  }
});
