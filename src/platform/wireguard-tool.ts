/**
 * What Linux and FreeBSD share for WireGuard: the `wg` tool (setconf, set, show dump), the routes an interface
 * needs for its peers, and turning a tool's failure into a 503 (not installed) or a 409 (refused, with a reason
 * that never carries a key).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { conflict, unavailable } from '../core/errors.js';
import { networkOf, parseCidr } from '../net/address.js';
import { findProgram } from './daemon-tools.js';
import { describeMissing, missingTool } from './debian-packages.js';
import { runCommand, type CommandResult } from './exec.js';
import type { WireguardInterfaceSpec, WireguardInterfaceStatus, WireguardPeerSpec } from './wireguard.js';

/** Runs a program found on PATH (or in sbin): 503 naming the Debian package when it is not installed. */
export async function runTool(program: string, args: string[], input?: string): Promise<CommandResult> {
  const path = findProgram(program);
  if (!path) throw unavailable(describeMissing(missingTool(program)));
  return runCommand(path, args, { input, timeoutMs: 15_000 });
}

/** One printable line of a tool's complaint, with anything shaped like a key replaced (wg echoes lines it refuses). */
export function toolReason(result: CommandResult): string {
  const line = `${result.stderr}\n${result.stdout}`.split('\n').map((l) => l.trim()).find(Boolean) ?? `exit status ${result.code}`;
  return line.replace(/[A-Za-z0-9+/]{42,43}=/g, '<key>').replace(/[^\x20-\x7e]/g, '').slice(0, 200);
}

/** Runs a tool and throws a 409 naming what was being done when it fails. */
export async function mustRun(what: string, program: string, args: string[], input?: string): Promise<CommandResult> {
  const result = await runTool(program, args, input);
  if (result.code !== 0) throw conflict(`${what} failed: ${program} ${args[0] ?? ''}: ${toolReason(result)}`);
  return result;
}

/**
 * Parses `wg show <if> dump`: the first line is the interface (private key, public key, port, fwmark), every
 * further line a peer (public key, preshared key, endpoint, allowed ips, latest handshake, rx, tx, keepalive).
 */
export function parseWgDump(name: string, text: string, nowSeconds: number): WireguardInterfaceStatus & { presharedKeys: Map<string, string | null>; privateKey: string } {
  const [first, ...rest] = text.trim().split('\n');
  const head = (first ?? '').split('\t');
  /** Each peer's preshared key (null: none), and the interface's private key: compared, never reported. */
  const presharedKeys = new Map<string, string | null>();
  return {
    running: true,
    interface: name,
    listen_port: Number(head[2]) || 0,
    public_key: head[1] ?? '',
    presharedKeys,
    privateKey: head[0] ?? '',
    peers: rest.filter(Boolean).map((line) => {
      const [publicKey, preshared, endpoint, allowed, handshake, rx, tx, keepalive] = line.split('\t');
      presharedKeys.set(publicKey, preshared === '(none)' ? null : preshared);
      const latest = Number(handshake) || 0;
      return {
        public_key: publicKey,
        endpoint: endpoint === '(none)' ? null : endpoint,
        allowed_ips: allowed === '(none)' ? '' : allowed,
        latest_handshake_secs_ago: latest === 0 ? -1 : Math.max(0, nowSeconds - latest),
        transfer_rx: Number(rx) || 0,
        transfer_tx: Number(tx) || 0,
        persistent_keepalive: keepalive === 'off' || !keepalive ? null : Number(keepalive),
      };
    }),
  };
}

/** The live state of an interface, or not running when `wg` cannot reach it. */
export async function readDump(name: string) {
  const dump = await runTool('wg', ['show', name, 'dump']);
  if (dump.code !== 0) return null;
  return parseWgDump(name, dump.stdout, Math.floor(Date.now() / 1000));
}

/** Writes the interface's file (0600) and applies keys, listen port and every peer with one `wg setconf`. */
export async function setconf(spec: WireguardInterfaceSpec): Promise<void> {
  writePrivate(spec.setconfFile, spec.setconf);
  await mustRun(`configuring ${spec.interface}`, 'wg', ['setconf', spec.interface, spec.setconfFile]);
}

/**
 * Like setconf, but changes only what differs from what the interface runs (`wg syncconf`): an interface adopted
 * from an earlier API process keeps its peers' sessions, so no packet waits for a new handshake.
 */
export async function syncconf(spec: WireguardInterfaceSpec): Promise<void> {
  writePrivate(spec.setconfFile, spec.setconf);
  await mustRun(`configuring ${spec.interface}`, 'wg', ['syncconf', spec.interface, spec.setconfFile]);
}

/**
 * An interface adopted from an earlier API process, brought to the spec touching only what differs. `wg syncconf`
 * sets the listen port whatever it was, and wireguard-go closes and opens its UDP socket for that (what arrives
 * meanwhile is lost): so the key and port are set only when they changed, and the peers through syncPeersWithWg,
 * which leaves an unchanged peer alone. A tunnel that runs the applied configuration is not touched at all.
 */
export async function syncAdopted(spec: WireguardInterfaceSpec): Promise<void> {
  const live = await readDump(spec.interface);
  if (!live || live.privateKey !== spec.private_key || live.listen_port !== spec.listen_port) {
    await syncconf(spec);
    return;
  }
  writePrivate(spec.setconfFile, spec.setconf);
  await syncPeersWithWg(spec);
}

function writePrivate(file: string, content: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, content, { mode: 0o600 });
}

/** `wg set` arguments for one peer; the preshared key is read from `keyFile`. */
function peerArgs(name: string, peer: WireguardPeerSpec, keyFile: string): string[] {
  return [
    'set', name, 'peer', peer.public_key,
    'preshared-key', peer.preshared_key ? keyFile : '/dev/null',
    'allowed-ips', peer.allowed_ips.join(','),
    ...(peer.endpoint ? ['endpoint', peer.endpoint] : []),
    'persistent-keepalive', peer.persistent_keepalive ? String(peer.persistent_keepalive) : 'off',
  ];
}

const sameList = (a: string[], b: string[]) => [...a].sort().join(',') === [...b].sort().join(',');

/**
 * Brings the running interface's peers to the spec with `wg set`: peers no longer configured are removed, new
 * or changed ones set; a peer whose settings did not change is not touched, so its session carries on.
 */
export async function syncPeersWithWg(spec: WireguardInterfaceSpec): Promise<void> {
  const live = await readDump(spec.interface);
  if (!live) throw conflict(`${spec.interface} is not running: start the tunnel first`);
  const wanted = new Map(spec.peers.map((peer) => [peer.public_key, peer]));
  for (const peer of live.peers) {
    if (!wanted.has(peer.public_key)) await mustRun(`removing a peer from ${spec.interface}`, 'wg', ['set', spec.interface, 'peer', peer.public_key, 'remove']);
  }
  const current = new Map(live.peers.map((peer) => [peer.public_key, peer]));
  for (const peer of spec.peers) {
    const now = current.get(peer.public_key);
    const unchanged = now
      && sameList(now.allowed_ips.split(',').filter(Boolean), peer.allowed_ips.map((ip) => networkOrHost(ip)))
      && (peer.endpoint === null || now.endpoint === peer.endpoint)
      && now.persistent_keepalive === peer.persistent_keepalive
      && live.presharedKeys.get(peer.public_key) === peer.preshared_key;
    if (unchanged) continue;
    // The key file lives only while `wg set` reads it.
    const keyFile = join(dirname(spec.setconfFile), `${spec.interface}.psk`);
    if (peer.preshared_key) writePrivate(keyFile, `${peer.preshared_key}\n`);
    try {
      await mustRun(`setting a peer of ${spec.interface}`, 'wg', peerArgs(spec.interface, peer, keyFile));
    } finally {
      rmSync(keyFile, { force: true });
    }
  }
}

/** How wg prints an allowed IP: the network with its prefix (10.8.0.2 → 10.8.0.2/32). */
function networkOrHost(entry: string): string {
  const cidr = parseCidr(entry);
  return cidr ? networkOf(cidr) : entry;
}

/**
 * Routes the interface needs for its peers: every allowed network outside the tunnel's own subnet (which the
 * address already routes). Default routes (/0) are left out: a peer allowed everything (a client's full-tunnel
 * AllowedIPs mirrored on the server) must not take over the appliance's own default route.
 */
export function peerRoutes(spec: WireguardInterfaceSpec): string[] {
  const own = parseCidr(spec.address);
  const ownNetwork = own ? networkOf(own) : null;
  const routes = new Set<string>();
  for (const peer of spec.peers) {
    for (const entry of peer.allowed_ips) {
      const cidr = parseCidr(entry);
      if (!cidr || cidr.prefix === 0) continue;
      const network = networkOf(cidr);
      if (own && ownNetwork && cidr.family === own.family && insideNetwork(network, ownNetwork)) continue;
      routes.add(network);
    }
  }
  return [...routes].sort();
}

/** Whether network `inner` lies inside network `outer` (both normalised, same family). */
function insideNetwork(inner: string, outer: string): boolean {
  const [innerAddress, innerPrefix] = inner.split('/');
  const outerPrefix = Number(outer.split('/')[1]);
  if (Number(innerPrefix) < outerPrefix) return false;
  const family = innerAddress.includes(':') ? 6 : 4;
  return networkOf({ address: innerAddress, family, prefix: outerPrefix }) === outer;
}
