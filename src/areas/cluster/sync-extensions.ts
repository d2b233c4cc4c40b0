import type { ApiExtension } from '../../http/extensions.js';

const ha = (method: string, path: string, why: string, access = 'ha:manage'): ApiExtension => ({ method, path, access, why: `Issue 39 (configuration sync): ${why}` });

/** The configuration-sync routes beyond endpoints.tsv (wire-format §10's shapes where it has them); spread into API_EXTENSIONS. */
export const CLUSTER_SYNC_EXTENSIONS: readonly ApiExtension[] = [
  ha('POST', '/api/v1/cluster/pairing-code', 'opens a one-time pairing code on the node to be paired and shows its certificate pin (no trust on first use).'),
  ha('POST', '/api/v1/cluster/pairing', "the other node's pairing call, authenticated by the one-time code over HTTPS pinned to this node's key; public because the caller holds no key yet.", 'public'),
  ha('GET', '/api/v1/cluster/nodes', 'the paired peer, its health and synchronised version (wire-format §10).'),
  ha('POST', '/api/v1/cluster/nodes', "pairs with a peer: address, HTTPS port, certificate pin and the peer's one-time code."),
  ha('GET', '/api/v1/cluster/nodes/{id}', 'the paired peer.'),
  ha('PUT', '/api/v1/cluster/nodes/{id}', "renames the peer, pins its new certificate, or registers the key the peer's generate-key showed."),
  ha('POST', '/api/v1/cluster/nodes/{id}/generate-key', "replaces the key the peer presents to this node (system service account, ha:manage), shown once (wire-format §10)."),
  ha('DELETE', '/api/v1/cluster/nodes/{id}', 'unpairs: forgets the peer and revokes its key.'),
  ha('GET', '/api/v1/cluster/snapshot', 'the applied shared configuration, secrets sealed for the peer (wire-format §10).'),
  ha('GET', '/api/v1/cluster/snapshot/hash', "the shared configuration's hash (wire-format §10)."),
  ha('PUT', '/api/v1/cluster/snapshot', "the peer's snapshot, applied when it extends this node's hash-chained history (wire-format §10)."),
  ha('POST', '/api/v1/cluster/snapshot/force', "applies the peer's snapshot whatever the histories say (wire-format §10)."),
  ha('POST', '/api/v1/cluster/cert-push', "a certificate the primary renewed, its key sealed for this node, installed here (wire-format §10; the peer's key only)."),
  ha('GET', '/api/v1/cluster/sync/state', "this node's hash-chained history, which the peer compares with its own."),
  ha('POST', '/api/v1/cluster/sync/push', 'sends the applied configuration to the peer now (it is sent after every apply anyway).'),
  ha('POST', '/api/v1/cluster/sync/resolve', 'resolves split-brain: the administrator chooses which side is kept.'),
];
