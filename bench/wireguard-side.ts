/**
 * The firewall side of bench/wireguard.bench.ts, run inside the bench's namespace: Bulwark's linux WireGuard
 * driver brings an interface up and down `cycles` times (the last one stays up for the traffic figures); each
 * `up` is timed, next to the same ip steps on a plain veth. Prints one JSON line per event; ends the tunnel
 * when its stdin closes.
 */
import { createLinuxWireguard } from '../src/platform/linux/wireguard.js';
import type { WireguardInterfaceSpec } from '../src/platform/wireguard.js';
import { runCommand } from '../src/platform/exec.js';

const spec = JSON.parse(process.argv[2]) as WireguardInterfaceSpec;
const cycles = Number(process.argv[3]);
const wireguard = createLinuxWireguard();

// Baseline: the same address, MTU and link-up steps on a plain veth, through the same command runner.
const veth = `${spec.interface}v`;
for (let cycle = 0; cycle < cycles; cycle++) {
  const started = performance.now();
  for (const args of [['link', 'add', veth, 'type', 'veth', 'peer', 'name', `${veth}p`], ['address', 'add', '10.99.0.1/24', 'dev', veth], ['link', 'set', 'dev', veth, 'mtu', '1420'], ['link', 'set', 'dev', veth, 'up']]) {
    const result = await runCommand('ip', args);
    if (result.code !== 0) throw new Error(`ip ${args.join(' ')}: ${result.stderr}`);
  }
  console.log(JSON.stringify({ event: 'baseline', ms: performance.now() - started }));
  await runCommand('ip', ['link', 'del', veth]);
}
for (let cycle = 0; cycle < cycles; cycle++) {
  const started = performance.now();
  await wireguard.up(spec);
  const upMs = performance.now() - started;
  const status = await wireguard.status(spec.interface);
  console.log(JSON.stringify({ event: 'up', ms: upMs, backend: status.backend }));
  if (cycle < cycles - 1) await wireguard.down(spec.interface);
}
console.log(JSON.stringify({ event: 'ready' }));
process.stdin.resume();
process.stdin.on('end', async () => {
  await wireguard.closeAll();
  process.exit(0);
});
