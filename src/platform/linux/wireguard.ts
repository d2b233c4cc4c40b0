import type { WireguardControl, WireguardInterfaceStatus } from '../wireguard.js';
import { runCommand } from '../exec.js';
import { notDriven } from '../not-driven.js';

/**
 * Parses `wg show <if> dump`: the first line is the interface (private key, public key, port, fwmark), every
 * further line a peer (public key, preshared key, endpoint, allowed ips, latest handshake, rx, tx, keepalive).
 */
export function parseWgDump(name: string, text: string, nowSeconds: number): WireguardInterfaceStatus {
  const [first, ...rest] = text.trim().split('\n');
  const head = (first ?? '').split('\t');
  return {
    running: true,
    interface: name,
    listen_port: Number(head[2]) || 0,
    public_key: head[1] ?? '',
    peers: rest.filter(Boolean).map((line) => {
      const [publicKey, , endpoint, allowed, handshake, rx, tx, keepalive] = line.split('\t');
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

/** Live status through wireguard-tools; bringing interfaces up and down arrives with the WireGuard daemon issue. */
export function createLinuxWireguard(): WireguardControl {
  const pending = notDriven<WireguardControl>('linux', 'WireGuard interface control');
  return {
    up: (spec) => pending.up(spec),
    down: (name) => pending.down(name),
    async status(name) {
      const dump = await runCommand('wg', ['show', name, 'dump']);
      if (dump.code !== 0) return { running: false, interface: name, peers: [] };
      return parseWgDump(name, dump.stdout, Math.floor(Date.now() / 1000));
    },
  };
}
