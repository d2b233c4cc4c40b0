import type { WireguardControl, WireguardInterfaceSpec } from '../wireguard.js';

/** Interfaces "exist" in memory: up keeps the spec, status reports it (no peer ever handshakes). */
export function createSimulatedWireguard(): WireguardControl {
  const interfaces = new Map<string, WireguardInterfaceSpec>();
  return {
    async up(spec) {
      interfaces.set(spec.interface, structuredClone(spec));
    },
    async syncPeers(spec) {
      if (interfaces.has(spec.interface)) interfaces.set(spec.interface, structuredClone(spec));
    },
    async down(name) {
      interfaces.delete(name);
    },
    async status(name) {
      const spec = interfaces.get(name);
      const backend = { backend: 'simulated', pid: null, restarts: 0, last_error: null } as const;
      if (!spec) return { running: false, interface: name, peers: [], ...backend };
      return {
        running: true,
        interface: name,
        listen_port: spec.listen_port,
        public_key: spec.public_key,
        ...backend,
        peers: spec.peers.map((peer) => ({
          public_key: peer.public_key,
          endpoint: peer.endpoint,
          allowed_ips: peer.allowed_ips.join(','),
          latest_handshake_secs_ago: -1,
          transfer_rx: 0,
          transfer_tx: 0,
          persistent_keepalive: peer.persistent_keepalive,
        })),
      };
    },
    async closeAll() {
      interfaces.clear();
    },
    // Nothing runs outside this process: what it simulates ends with it.
    release() {},
  };
}
