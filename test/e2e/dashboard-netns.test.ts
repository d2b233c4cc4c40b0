import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { rootSkipReason } from '../helpers/shared.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = (file: string, args: string[], input?: string) => {
  const result = spawnSync(file, args, { input, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${file} ${args.join(' ')}: ${result.stderr || result.error?.message}`);
  return result.stdout;
};

test('linux platform in network namespaces: real connections in /connections, a dropped packet in /blocked', { skip: rootSkipReason('the namespace lab'), timeout: 240_000 }, async () => {
  const id = randomBytes(3).toString('hex');
  const fw = `bwd-fw-${id}`;
  const client = `bwd-cl-${id}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'bulwark-netns-'));
  const children: ChildProcess[] = [];
  try {
    run('ip', ['netns', 'add', fw]);
    run('ip', ['netns', 'add', client]);
    run('ip', ['link', 'add', `bwf${id}`, 'netns', fw, 'type', 'veth', 'peer', 'name', `bwc${id}`, 'netns', client]);
    run('ip', ['-n', fw, 'addr', 'add', '10.231.0.1/24', 'dev', `bwf${id}`]);
    run('ip', ['-n', client, 'addr', 'add', '10.231.0.2/24', 'dev', `bwc${id}`]);
    for (const [ns, dev] of [[fw, `bwf${id}`], [client, `bwc${id}`]]) {
      run('ip', ['-n', ns, 'link', 'set', dev, 'up']);
      run('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
    }
    const echo = spawn('ip', ['netns', 'exec', fw, process.execPath, '-e', "const net=require('net');net.createServer(s=>s.pipe(s)).listen(7000,'10.231.0.1');require('dgram').createSocket('udp4').bind(7001,'10.231.0.1')"], { stdio: 'ignore' });
    children.push(echo);
    const bulwark = spawn('ip', ['netns', 'exec', fw, process.execPath, '--import', 'tsx', join(ROOT, 'src/main.ts'), '--platform', 'linux', '--listen', '10.231.0.1:18080', '--data-dir', dataDir, '--log-level', 'warn'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    children.push(bulwark);
    let bulwarkErrors = '';
    bulwark.stderr!.on('data', (chunk: Buffer) => (bulwarkErrors += chunk));

    const output = run('ip', ['netns', 'exec', client, process.execPath, join(ROOT, 'test/e2e/fixtures/netns-client.mjs'), 'http://10.231.0.1:18080', '10.231.0.1']);
    const result = JSON.parse(output);

    assert.equal(result.connections.status, 200, JSON.stringify(result.connections.body));
    const flows = result.connections.body as { protocol: string; src_addr: string; dst_addr: string; dst_port: number; bytes_in: number; bytes_out: number; state: string }[];
    const echoFlows = flows.filter((f) => f.dst_port === 7000 && f.src_addr === '10.231.0.2' && f.dst_addr === '10.231.0.1');
    assert.equal(echoFlows.length, 3, `three echo connections in conntrack: ${JSON.stringify(flows)}`);
    assert.ok(echoFlows.every((f) => f.protocol === 'tcp' && f.state === 'ESTABLISHED'));
    assert.ok(echoFlows[0].bytes_out >= 60_000, 'accounting on: the heaviest flow (60 kB sent) comes first');
    assert.ok(echoFlows[0].bytes_in >= 60_000, 'the echo came back');
    assert.ok(result.connections.headers['x-bulwark-simulated'] === undefined, 'not simulated');
    assert.ok(result.udp.body.some((f: { dst_port: number }) => f.dst_port === 7001), 'the UDP datagram has a flow');

    assert.equal(result.blocked.status, 200);
    const drops = (result.blocked.body as { dst_port: number; src_addr: string; action: string; rule_id: string; protocol: string; interface: string }[]).filter((b) => b.dst_port === 9);
    assert.ok(drops.length >= 1, `the dropped SYN is in /blocked: ${JSON.stringify(result.blocked.body)} ${bulwarkErrors}`);
    assert.equal(drops[0].src_addr, '10.231.0.2');
    assert.equal(drops[0].action, 'block');
    assert.equal(drops[0].rule_id, result.rule_id, 'the block names the rule created through the API');
    assert.equal(drops[0].protocol, 'tcp');
    assert.equal(drops[0].interface, `bwf${id}`);

    assert.equal(result.status.body.pf_running, true);
    assert.equal(result.status.body.simulated, false);
    assert.equal(result.status.body.traffic.blocked_log.running, true);
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const ns of [fw, client]) {
      const pids = spawnSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
      for (const pid of pids) spawnSync('kill', ['-9', pid]);
      spawnSync('ip', ['netns', 'del', ns]);
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
});
