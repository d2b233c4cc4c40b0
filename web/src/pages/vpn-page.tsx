import { useEffect, useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import type { Row } from '../api/types';
import { CollectionSection } from '../components/collection-section';
import { ErrorAlert, messageOf } from '../components/error-alert';
import { Page } from '../components/page';
import type { FieldSpec } from '../components/record-form';

const TUNNEL_FIELDS: readonly FieldSpec[] = [
  { name: 'name', label: 'Name', kind: 'text', required: true },
  { name: 'listen_port', label: 'Listen port', kind: 'number', initial: '51820' },
  { name: 'address', label: 'Tunnel address', kind: 'text', hint: 'e.g. 10.99.0.1/24' },
  { name: 'endpoint_host', label: 'Public host name or address', kind: 'text' },
  { name: 'dns', label: 'DNS for clients', kind: 'text' },
];

const PEER_EDIT_FIELDS: readonly FieldSpec[] = [
  { name: 'name', label: 'Name', kind: 'text' },
  { name: 'allowed_ips', label: 'Allowed IPs', kind: 'text' },
  { name: 'endpoint', label: 'Endpoint', kind: 'text', hint: 'host:port, when the peer has a fixed address' },
  { name: 'keepalive', label: 'Keepalive (seconds)', kind: 'number', read: (row) => (row.persistent_keepalive == null ? '' : String(row.persistent_keepalive)) },
  { name: 'preshared_key', label: 'Preshared key', kind: 'password', setFlag: 'has_preshared_key' },
];

interface PeerRef {
  tunnelId: string;
  peerId: string;
  name: string;
}

/** A peer's client configuration as text and as the QR code a phone scans (a PNG fetched with the session). */
function PeerConfigView({ peer, onClose }: { peer: PeerRef; onClose(): void }) {
  const { api, can } = useSession();
  // Key material needs vpn:write; a viewer gets the file with a placeholder for the client's own key.
  const keys = can('vpn:write') ? { include_keys: 'true' } : {};
  const [text, setText] = useState<string | null>(null);
  const [qr, setQr] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let url: string | null = null;
    const base = `/vpn/wg/${peer.tunnelId}/peers/${peer.peerId}/config`;
    Promise.all([api.get<{ full_tunnel: string }>(base, keys), api.blob(base, { format: 'qr', variant: 'full', ...keys })])
      .then(([config, png]) => {
        url = URL.createObjectURL(png);
        setText(config.full_tunnel);
        setQr(url);
      })
      .catch((failure: unknown) => setError(messageOf(failure)));
    return () => {
      if (url) URL.revokeObjectURL(url);
    };
  }, [peer.tunnelId, peer.peerId]);
  return (
    <section class="panel" aria-label={`Client configuration of ${peer.name}`}>
      <header class="panel-head">
        <h2>Client configuration of {peer.name}</h2>
        <button type="button" class="secondary" onClick={onClose}>
          Close
        </button>
      </header>
      <ErrorAlert message={error} />
      <div class="peer-config">
        {qr && <img src={qr} alt={`QR code of the WireGuard configuration of ${peer.name}`} width={240} height={240} />}
        {text && <pre>{text}</pre>}
      </div>
    </section>
  );
}

/** An IPsec SA (strongSwan): the peers, how they authenticate, what traffic is protected and with which proposals. */
const IPSEC_FIELDS: readonly FieldSpec[] = [
  { name: 'name', label: 'Name', kind: 'text', required: true },
  { name: 'local_addr', label: 'Local address', kind: 'text', required: true, hint: 'any, an IP address or a CIDR' },
  { name: 'remote_addr', label: 'Remote address', kind: 'text', required: true, hint: 'any, an IP address or a CIDR (a network only answers)' },
  { name: 'protocol', label: 'Protocol', kind: 'select', options: ['esp', 'ah', 'esp_ah'], initial: 'esp' },
  { name: 'mode', label: 'Mode', kind: 'select', options: ['tunnel', 'transport'], initial: 'tunnel' },
  { name: 'auth_method', label: 'Authentication', kind: 'select', options: ['psk', 'cert'], initial: 'psk', hint: 'psk: pre-shared key; cert: a certificate of the local CA' },
  { name: 'psk', label: 'Pre-shared key', kind: 'password', setFlag: 'has_psk', hint: '16 to 256 printable characters' },
  { name: 'certificate_id', label: 'Certificate id', kind: 'text', hint: 'with cert: the id of a local-CA certificate (Certificates page)' },
  { name: 'local_id', label: 'Local identity', kind: 'text', hint: 'IP address, host name, e-mail or DN; empty: the address' },
  { name: 'remote_id', label: 'Remote identity', kind: 'text' },
  { name: 'local_ts', label: 'Local networks', kind: 'lines', hint: 'CIDRs protected on this side, one per line; none: the address itself' },
  { name: 'remote_ts', label: 'Remote networks', kind: 'lines', hint: 'CIDRs protected on the remote side, one per line' },
  { name: 'ike_proposals', label: 'IKE proposals', kind: 'text', hint: 'strongSwan names, comma-separated, e.g. aes256-sha256-modp2048' },
  { name: 'esp_proposals', label: 'ESP proposals', kind: 'text', hint: 'e.g. aes256gcm16' },
  { name: 'ah_proposals', label: 'AH proposals', kind: 'text', hint: 'e.g. sha256' },
  { name: 'start_action', label: 'Start', kind: 'select', options: ['trap', 'start', 'none'], initial: 'trap', hint: 'trap: when traffic matches; start: when loaded; none: answer only' },
];

export function VpnPage() {
  const [tunnel, setTunnel] = useState<Row | null>(null);
  const [peer, setPeer] = useState<PeerRef | null>(null);
  return (
    <Page title="VPN" help="WireGuard tunnels and their peers, and IPsec connections.">
      <CollectionSection
        title="WireGuard tunnels"
        itemName="tunnel"
        path="/vpn/wg"
        writePermission="vpn:write"
        deletable
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'interface', label: 'Interface' },
          { key: 'listen_port', label: 'Port' },
          { key: 'address', label: 'Address' },
          { key: 'public_key', label: 'Public key' },
          { key: 'status', label: 'Status' },
        ]}
        createFields={TUNNEL_FIELDS}
        editFields={[...TUNNEL_FIELDS, { name: 'mtu', label: 'MTU', kind: 'number', hint: 'empty: automatic' }]}
        rowActions={(row) => (
          <button type="button" class="secondary" onClick={() => setTunnel(row)}>
            Peers
          </button>
        )}
      />
      {tunnel && (
        <CollectionSection
          key={String(tunnel.id)}
          title={`Peers of ${String(tunnel.name)}`}
          itemName="peer"
          path={`/vpn/wg/${String(tunnel.id)}/peers`}
          writePermission="vpn:write"
          deletable
          columns={[
            { key: 'name', label: 'Name' },
            { key: 'allowed_ips', label: 'Allowed IPs' },
            { key: 'endpoint', label: 'Endpoint' },
            { key: 'public_key', label: 'Public key' },
            { key: 'has_preshared_key', label: 'Preshared key' },
          ]}
          createFields={[
            { name: 'name', label: 'Name', kind: 'text' },
            { name: 'allowed_ips', label: 'Allowed IPs', kind: 'text', hint: 'empty: the next free address', sendEmpty: true },
            { name: 'auto_generate_key', label: 'Generate the client key pair here', kind: 'checkbox', initial: true },
            { name: 'public_key', label: 'Client public key', kind: 'text', hint: 'when the client made its own keys' },
          ]}
          editFields={PEER_EDIT_FIELDS}
          rowActions={(row) => (
            <button type="button" class="secondary" onClick={() => setPeer({ tunnelId: String(tunnel.id), peerId: String(row.id), name: String(row.name || row.id) })}>
              Client config
            </button>
          )}
        />
      )}
      {peer && <PeerConfigView peer={peer} onClose={() => setPeer(null)} />}
      <CollectionSection
        title="IPsec connections"
        itemName="IPsec connection"
        path="/vpn/ipsec"
        writePermission="vpn:write"
        deletable
        createFields={IPSEC_FIELDS}
        editFields={IPSEC_FIELDS}
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'local_addr', label: 'Local' },
          { key: 'remote_addr', label: 'Remote' },
          { key: 'protocol', label: 'Protocol' },
          { key: 'mode', label: 'Mode' },
          { key: 'status', label: 'Status' },
        ]}
      />
    </Page>
  );
}
