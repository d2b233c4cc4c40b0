/**
 * Renders the configuration of Kea's DHCP-DDNS server (kea-dhcp-ddns, "D2"), which receives name-change
 * requests from kea-dhcp4 on loopback and sends the DNS updates, signed with the TSIG key when one is set.
 * Pure: configuration in, JSON text out (checked with `kea-dhcp-ddns -t`). The TSIG secret is written here
 * (the file is readable by Kea's group only) and nowhere else.
 */
import { RenderRefusal } from '../refusal.js';
import { keaBase64, keaName, keaServer } from './kea-values.js';

/** Where D2 listens for kea-dhcp4's requests (Kea's defaults). */
export const DDNS_LISTEN = { address: '127.0.0.1', port: 53001 } as const;

export interface KeaDdnsInput {
  forward_zone: string;
  reverse_zone_v4: string;
  dns_server: string;
  tsig_key: string;
  tsig_algorithm: string;
  /** The opened (plain) secret, or empty. */
  tsig_secret: string;
  log_level: string;
  paths: { controlSocket: string };
}

const ALGORITHMS: Record<string, string> = { 'hmac-sha256': 'HMAC-SHA256', 'hmac-sha512': 'HMAC-SHA512', 'hmac-md5': 'HMAC-MD5' };
const SEVERITY: Record<string, string> = { error: 'ERROR', warn: 'WARN', info: 'INFO', debug: 'DEBUG', trace: 'DEBUG' };

/** `lan.example` → `lan.example.` (D2 wants fully qualified zone names). */
const fqdn = (name: string, field: string) => {
  const checked = keaName(name, field);
  return checked.endsWith('.') ? checked : `${checked}.`;
};

export function renderKeaDdns(input: KeaDdnsInput): string {
  if (!input.forward_zone) throw new RenderRefusal('ddns.forward_zone', 'is required when dynamic DNS is on');
  if (!input.dns_server) throw new RenderRefusal('ddns.dns_server', 'is required when dynamic DNS is on');
  const server = keaServer(input.dns_server, 'ddns.dns_server');
  const keyName = input.tsig_key ? keaName(input.tsig_key, 'ddns.tsig_key') : null;
  if (keyName && !input.tsig_secret) throw new RenderRefusal('ddns.tsig_secret', 'is required with a TSIG key');
  const algorithm = ALGORITHMS[input.tsig_algorithm];
  if (keyName && !algorithm) throw new RenderRefusal('ddns.tsig_algorithm', 'is not a TSIG algorithm');
  const domain = (name: string, field: string) => ({
    name: fqdn(name, field),
    ...(keyName ? { 'key-name': keyName } : {}),
    'dns-servers': [{ 'ip-address': server.ip, port: server.port }],
  });
  const config = {
    DhcpDdns: {
      'ip-address': DDNS_LISTEN.address,
      port: DDNS_LISTEN.port,
      'control-socket': { 'socket-type': 'unix', 'socket-name': input.paths.controlSocket },
      'tsig-keys': keyName ? [{ name: keyName, algorithm, secret: keaBase64(input.tsig_secret, 'ddns.tsig_secret') }] : [],
      'forward-ddns': { 'ddns-domains': [domain(input.forward_zone, 'ddns.forward_zone')] },
      'reverse-ddns': { 'ddns-domains': input.reverse_zone_v4 ? [domain(input.reverse_zone_v4, 'ddns.reverse_zone_v4')] : [] },
      loggers: [{ name: 'kea-dhcp-ddns', output_options: [{ output: 'stdout' }], severity: SEVERITY[input.log_level] ?? 'INFO' }],
    },
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}
