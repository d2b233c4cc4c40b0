import { spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Names of the three namespaces of a client — firewall — server test, unique to this process. */
export interface ThreeNamespaces {
  client: string;
  firewall: string;
  server: string;
}

export interface TopologyAddresses {
  client: string;
  /** The firewall's outside addresses; the first is the client's gateway. */
  firewallOutside: string[];
  firewallInside: string;
  server: string[];
}

export function sh(args: string[]): string {
  const result = spawnSync(args[0], args.slice(1), { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

export const inNs = (ns: string, ...args: string[]) => sh(['ip', 'netns', 'exec', ns, ...args]);

export function removeNamespaces(ns: ThreeNamespaces): void {
  for (const name of Object.values(ns)) spawnSync('ip', ['netns', 'delete', name]);
}

/**
 * client (cl0) — (fwc) firewall (fws) — (sv0) server, all /24, forwarding on in the firewall, each end routing
 * through it. Namespaces left over from an interrupted run are removed first and again when the process exits.
 */
export function buildThreeNamespaces(ns: ThreeNamespaces, addresses: TopologyAddresses): void {
  removeNamespaces(ns);
  process.on('exit', () => removeNamespaces(ns));
  for (const name of Object.values(ns)) {
    sh(['ip', 'netns', 'add', name]);
    inNs(name, 'ip', 'link', 'set', 'lo', 'up');
  }
  sh(['ip', 'link', 'add', 'cl0', 'netns', ns.client, 'type', 'veth', 'peer', 'name', 'fwc', 'netns', ns.firewall]);
  sh(['ip', 'link', 'add', 'sv0', 'netns', ns.server, 'type', 'veth', 'peer', 'name', 'fws', 'netns', ns.firewall]);
  inNs(ns.client, 'ip', 'addr', 'add', `${addresses.client}/24`, 'dev', 'cl0');
  inNs(ns.client, 'ip', 'link', 'set', 'cl0', 'up');
  inNs(ns.client, 'ip', 'route', 'add', 'default', 'via', addresses.firewallOutside[0]);
  for (const address of addresses.firewallOutside) inNs(ns.firewall, 'ip', 'addr', 'add', `${address}/24`, 'dev', 'fwc');
  inNs(ns.firewall, 'ip', 'addr', 'add', `${addresses.firewallInside}/24`, 'dev', 'fws');
  inNs(ns.firewall, 'ip', 'link', 'set', 'fwc', 'up');
  inNs(ns.firewall, 'ip', 'link', 'set', 'fws', 'up');
  inNs(ns.firewall, 'sysctl', '-q', '-w', 'net.ipv4.ip_forward=1');
  for (const address of addresses.server) inNs(ns.server, 'ip', 'addr', 'add', `${address}/24`, 'dev', 'sv0');
  inNs(ns.server, 'ip', 'link', 'set', 'sv0', 'up');
  inNs(ns.server, 'ip', 'route', 'add', 'default', 'via', addresses.firewallInside);
}

/** The tools the nftables driver runs, as wrappers in `dir` that run the real nft, conntrack and ip inside `ns` only. */
export function toolsInNamespace(dir: string, ns: string): { nft: string; conntrack: string; ip: string } {
  const tools = { nft: join(dir, 'nft'), conntrack: join(dir, 'conntrack'), ip: join(dir, 'ip') };
  for (const [tool, path] of Object.entries(tools)) {
    writeFileSync(path, `#!/bin/sh\nexec ip netns exec ${ns} ${tool} "$@"\n`);
    chmodSync(path, 0o755);
  }
  return tools;
}
