import type { ConfigData, ConfigStore } from '../../../store/config-store.js';
import { publicKeyOf } from '../../vpn/wireguard.js';
import type { MappedKind } from './model.js';

/**
 * Where an intermediate kind goes when the area that owns the concept declares a collection for it in this
 * build: the collection's kind and the body its `create` takes (the collection then validates, checks
 * uniqueness and references, and seals secrets as for any write). Kinds without an adapter, or whose
 * collection is not declared, are kept as `thirdparty.<kind>`.
 */
export interface Adapter {
  kind: string;
  /** The parent object's link field, for nested collections (peers under a tunnel). */
  parentLink?: string;
  body(data: ConfigData, store: ConfigStore): { body: ConfigData; notes: string[] };
}

export const ADAPTERS: Partial<Record<MappedKind, Adapter>> = {
  wg_tunnel: {
    kind: 'wg_tunnel',
    body(data, store) {
      const addresses = String(data.address ?? '').split(',').map((s) => s.trim()).filter(Boolean);
      const used = new Set(store.list('wg_tunnel').map((o) => o.data.interface));
      let n = 0;
      while (used.has(`wg${n}`)) n++;
      const privateKey = String(data.private_key);
      const mtu = typeof data.mtu === 'number' && data.mtu >= 576 && data.mtu <= 9420 ? data.mtu : null;
      const notes = [
        ...(addresses.length > 1 ? [`only the first tunnel address is kept (${addresses.slice(1).join(', ')} dropped)`] : []),
        ...(data.public_key && data.public_key !== publicKeyOf(privateKey) ? ['the public key in the file did not match its private key: derived again'] : []),
        ...(data.enabled === false ? ['disabled in the source: imported down'] : []),
      ];
      return {
        notes,
        body: {
          name: data.name, interface: `wg${n}`, private_key: privateKey, public_key: publicKeyOf(privateKey),
          listen_port: data.listen_port, address: addresses[0] ?? '', dns: data.dns ?? null, mtu,
          listen_interface: null, split_routes: null, endpoint_host: null, status: 'down',
        },
      };
    },
  },
  wg_peer: {
    kind: 'wg_peer',
    parentLink: 'tunnel_id',
    body(data) {
      return {
        notes: data.enabled === false ? ['disabled in the source: Bulwark peers have no enabled flag; imported active'] : [],
        body: {
          name: String(data.name ?? '').slice(0, 128), public_key: data.public_key,
          ...(typeof data.preshared_key === 'string' && data.preshared_key ? { preshared_key: data.preshared_key } : {}),
          endpoint: data.endpoint ?? null, allowed_ips: data.allowed_ips, persistent_keepalive: data.persistent_keepalive ?? null,
        },
      };
    },
  },
};
