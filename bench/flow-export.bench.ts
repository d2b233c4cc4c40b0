import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findProgram } from '../src/platform/daemon-tools.js';
import { softflowdArguments } from '../src/platform/softflowd-arguments.js';
import { systemAccount } from '../src/platform/daemon-runtime.js';
import { fmt, median } from './harness.js';

/**
 * The cost of flow export in forwarded throughput: iperf3 TCP from a client namespace to a server namespace
 * through a firewall namespace, alternately without and with softflowd (the argument vector Bulwark renders,
 * run as nobody with CAP_NET_RAW as Bulwark runs it) capturing the firewall's client-side interface and
 * exporting IPFIX to a collector namespace — same run, ROUNDS rounds each, medians compared. Also reports what
 * softflowd counted against what iperf3 sent (its capture drops at full rate).
 */
const ROUNDS = 3;
const SECONDS = 5;
const tag = `fxb${process.pid.toString(36)}`;
const ns = { client: `${tag}cl`, fw: `${tag}fw`, server: `${tag}sv`, collector: `${tag}co` };

const missing = ['ip', 'iperf3', 'softflowd', 'softflowctl', 'setpriv'].filter((p) => !findProgram(p));
if (process.getuid?.() !== 0 || missing.length) {
  console.log(`skipped: ${process.getuid?.() !== 0 ? 'needs root (network namespaces)' : `${missing.join(', ')} not installed`}`);
  process.exit(0);
}

const sh = (args: string[]) => {
  const result = spawnSync(args[0], args.slice(1), { encoding: 'utf8', timeout: 60_000 });
  if (result.status !== 0) throw new Error(`${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
};
const inNs = (name: string, ...args: string[]) => sh(['ip', 'netns', 'exec', name, ...args]);
const work = mkdtempSync(join(tmpdir(), 'bulwark-bench-fx-'));
const children: ChildProcess[] = [];

function cleanup(): void {
  for (const child of children) child.kill('SIGKILL');
  for (const name of Object.values(ns)) {
    for (const pid of spawnSync('ip', ['netns', 'pids', name], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean)) spawnSync('kill', ['-9', pid]);
    spawnSync('ip', ['netns', 'del', name]);
  }
  rmSync(work, { recursive: true, force: true });
}

async function iperf(): Promise<{ mbps: number; bytes: number }> {
  const report = JSON.parse(inNs(ns.client, 'iperf3', '-c', '10.237.2.2', '-p', '5314', '-t', String(SECONDS), '-J'));
  return { mbps: report.end.sum_received.bits_per_second / 1e6, bytes: report.end.sum_sent.bytes };
}

try {
  for (const name of Object.values(ns)) {
    sh(['ip', 'netns', 'add', name]);
    inNs(name, 'ip', 'link', 'set', 'lo', 'up');
  }
  const link = (a: string, aIf: string, aAddr: string, b: string, bIf: string, bAddr: string) => {
    sh(['ip', 'link', 'add', aIf, 'netns', a, 'type', 'veth', 'peer', 'name', bIf, 'netns', b]);
    inNs(a, 'ip', 'address', 'add', aAddr, 'dev', aIf);
    inNs(b, 'ip', 'address', 'add', bAddr, 'dev', bIf);
    inNs(a, 'ip', 'link', 'set', aIf, 'up');
    inNs(b, 'ip', 'link', 'set', bIf, 'up');
  };
  link(ns.client, `${tag}a`, '10.237.1.2/24', ns.fw, `${tag}c`, '10.237.1.1/24');
  link(ns.server, `${tag}b`, '10.237.2.2/24', ns.fw, `${tag}s`, '10.237.2.1/24');
  link(ns.collector, `${tag}d`, '10.237.3.2/24', ns.fw, `${tag}k`, '10.237.3.1/24');
  inNs(ns.client, 'ip', 'route', 'add', 'default', 'via', '10.237.1.1');
  inNs(ns.server, 'ip', 'route', 'add', 'default', 'via', '10.237.2.1');
  inNs(ns.fw, 'sysctl', '-q', '-w', 'net.ipv4.ip_forward=1');
  const server = spawn('ip', ['netns', 'exec', ns.server, 'iperf3', '-s', '-B', '10.237.2.2', '-p', '5314'], { stdio: 'ignore' });
  children.push(server);
  // A sink for the export datagrams (the bench measures the exporter, not a collector).
  children.push(spawn('ip', ['netns', 'exec', ns.collector, process.execPath, '-e', "require('dgram').createSocket('udp4').on('message',()=>{}).bind(4739,'10.237.3.2')"], { stdio: 'ignore' }));
  await new Promise((resolve) => setTimeout(resolve, 500));

  const nobody = systemAccount('nobody')!;
  chownSync(work, nobody.uid, nobody.gid);
  const ifindex = Number(inNs(ns.fw, 'cat', `/sys/class/net/${tag}c/ifindex`).trim());
  const files = { pidFile: join(work, 'if.pid'), controlSocket: join(work, 'if.ctl') };
  const args = softflowdArguments({
    protocol: 'ipfix', collectors: [{ address: '10.237.3.2', port: 4739 }], activeTimeoutSecs: 60, inactiveTimeoutSecs: 15, sampling: 1,
    interfaces: [`${tag}c`], runtime: { dataDir: work },
  }, { name: `${tag}c`, ifindex }, files);
  const startExporter = async () => {
    const child = spawn('ip', ['netns', 'exec', ns.fw, findProgram('setpriv')!, `--reuid=${nobody.uid}`, `--regid=${nobody.gid}`, '--clear-groups',
      '--inh-caps=+net_raw', '--ambient-caps=+net_raw', '--', findProgram('softflowd')!, ...args], { stdio: 'ignore' });
    children.push(child);
    for (let i = 0; i < 100; i++) {
      if (spawnSync('test', ['-S', files.controlSocket]).status === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return child;
  };
  const statistics = () => inNs(ns.fw, findProgram('softflowctl')!, '-c', files.controlSocket, 'statistics');

  const without: number[] = [];
  const withExport: number[] = [];
  let counted = 0;
  let sent = 0;
  let dropped = 0;
  for (let round = 0; round < ROUNDS; round++) {
    without.push((await iperf()).mbps);
    const exporter = await startExporter();
    const run = await iperf();
    withExport.push(run.mbps);
    sent += run.bytes;
    const stats = statistics();
    counted += Number(/tcp \(6\):\s+(\d+)/.exec(stats)?.[1] ?? 0);
    dropped += Number(/Packets dropped by libpcap: (\d+)/.exec(stats)?.[1] ?? 0);
    const exited = new Promise((resolve) => exporter.once('exit', resolve));
    exporter.kill('SIGTERM');
    inNs(ns.fw, 'sh', '-c', `kill $(cat ${files.pidFile}) 2>/dev/null || true`);
    await exited;
    rmSync(files.controlSocket, { force: true });
  }
  const base = median(without);
  const exported = median(withExport);
  console.log(`flow export (softflowd, IPFIX, one interface), iperf3 TCP ${SECONDS} s through the firewall namespace, ${ROUNDS} rounds each, same run:`);
  console.log(`  without export: median ${fmt(base)} Mbit/s  (${without.map((v) => fmt(v)).join(', ')})`);
  console.log(`  with export:    median ${fmt(exported)} Mbit/s  (${withExport.map((v) => fmt(v)).join(', ')})`);
  console.log(`  overhead: ${fmt(((base - exported) / base) * 100)} % of forwarded throughput`);
  console.log(`  softflowd counted ${fmt((counted / Math.max(1, sent)) * 100)} % of the TCP bytes sent (active flows included, both directions); libpcap dropped ${dropped} packets at full rate`);
} finally {
  cleanup();
}
