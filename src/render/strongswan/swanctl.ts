/**
 * The one writer of strongSwan configuration (`swanctl.conf` and the charon instance's `strongswan.conf`). Every
 * value goes through `swanValue`: it must fit its field's grammar and is then written inside double quotes, so
 * no value can open or close a section or add a key. Secrets are written base64-encoded (`0s…`).
 */
import { renderRefused } from '../refusal.js';
import { isCidr } from '../grammar.js';
import { proposalProblem, type ProposalKind } from './strongswan-proposals.js';

/** Printable ASCII without the quote and backslash (the only characters a quoted strongSwan value treats specially). */
const QUOTABLE = /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/;

/** A quoted value, or a 409 naming `field` when it does not fit `grammar` (or could not stay inside the quotes). */
export function swanValue(value: string, field: string, grammar: (value: string) => boolean = () => true): string {
  if (!QUOTABLE.test(value) || !grammar(value)) throw renderRefused('strongSwan configuration', field, 'not a valid value');
  return `"${value}"`;
}

/** An IKE identity: an IP address, a host name, an email address or a distinguished name (`CN=…, O=…`). */
export const IKE_ID_PATTERN = '^[A-Za-z0-9@.:=,_*/+ -]{1,255}$';
export const isIkeId = (value: string): boolean => new RegExp(IKE_ID_PATTERN).test(value) && value.trim() === value;

/** A local or remote address of an IKE SA: `%any`, an IP address or a network in CIDR form. */
export const isIkeAddress = (value: string): boolean => value === '%any' || isCidr(value);

/** Names of connections and files are Bulwark's own (`bulwark-<uuid>`, `local-<uuid>.pem`). */
const isOwnName = (value: string) => /^[a-z0-9-]{1,80}(\.pem)?$/.test(value);

export interface SwanctlConnection {
  /** Connection and child name (Bulwark's: built from the SA id). */
  name: string;
  field: string;
  localAddrs: string;
  remoteAddrs: string;
  localId: string | null;
  remoteId: string | null;
  auth: 'psk' | 'pubkey';
  /** File names under x509/ (the local certificate) and x509ca/ (the CA trusted for the peer's), for pubkey. */
  certFile: string | null;
  caFile: string | null;
  ikeProposals: string;
  espProposals: string | null;
  ahProposals: string | null;
  localTs: string[];
  remoteTs: string[];
  mode: 'tunnel' | 'transport';
  startAction: 'none' | 'trap' | 'start';
  /** Force UDP encapsulation of ESP (kernel-libipsec sends ESP through the IKE socket). */
  encap: boolean;
  psk: string | null;
}

const proposals = (value: string, kind: ProposalKind, field: string) => swanValue(value, field, (v) => proposalProblem(v, kind) === null);
const cidrList = (values: string[], field: string) => (values.length ? values.map((v) => swanValue(v, field, isCidr)).join(',') : '"dynamic"');

/** swanctl.conf: one IKEv2 connection (with one child) per SA, and the PSK secrets. */
export function renderSwanctl(connections: SwanctlConnection[]): string {
  const lines = ['# Bulwark IPsec configuration (generated; do not edit).', 'connections {'];
  const secrets: string[] = [];
  for (const c of connections) {
    const f = (name: string) => `${c.field}.${name}`;
    lines.push(
      `  ${swanKey(c.name)} {`,
      '    version = 2',
      `    local_addrs = ${swanValue(c.localAddrs, f('local_addr'), isIkeAddress)}`,
      `    remote_addrs = ${swanValue(c.remoteAddrs, f('remote_addr'), isIkeAddress)}`,
      `    proposals = ${proposals(c.ikeProposals, 'ike', f('ike_proposals'))}`,
      `    encap = ${c.encap ? 'yes' : 'no'}`,
      '    local {',
      `      auth = ${c.auth}`,
      ...(c.localId ? [`      id = ${swanValue(c.localId, f('local_id'), isIkeId)}`] : []),
      ...(c.auth === 'pubkey' && c.certFile ? [`      certs = ${swanValue(c.certFile, f('certificate_id'), isOwnName)}`] : []),
      '    }',
      '    remote {',
      `      auth = ${c.auth}`,
      ...(c.remoteId ? [`      id = ${swanValue(c.remoteId, f('remote_id'), isIkeId)}`] : []),
      ...(c.auth === 'pubkey' && c.caFile ? [`      cacerts = ${swanValue(c.caFile, f('certificate_id'), isOwnName)}`] : []),
      '    }',
      '    children {',
      `      ${swanKey(c.name)} {`,
      `        local_ts = ${cidrList(c.localTs, f('local_ts'))}`,
      `        remote_ts = ${cidrList(c.remoteTs, f('remote_ts'))}`,
      `        mode = ${c.mode}`,
      ...(c.espProposals ? [`        esp_proposals = ${proposals(c.espProposals, 'esp', f('esp_proposals'))}`] : []),
      ...(c.ahProposals ? [`        ah_proposals = ${proposals(c.ahProposals, 'ah', f('ah_proposals'))}`] : []),
      `        start_action = ${c.startAction}`,
      '        dpd_action = restart',
      '      }',
      '    }',
      '  }',
    );
    if (c.auth === 'psk') {
      if (!c.psk) throw renderRefused('strongSwan configuration', f('psk'), 'a pre-shared key is required for psk authentication');
      const ids = [c.localId, c.remoteId].filter((id): id is string => id !== null);
      secrets.push(
        `  ike-${swanKey(c.name)} {`,
        ...ids.map((id, index) => `    id-${index} = ${swanValue(id, f(index === 0 && c.localId ? 'local_id' : 'remote_id'), isIkeId)}`),
        `    secret = ${swanValue(`0s${Buffer.from(c.psk, 'utf8').toString('base64')}`, f('psk'))}`,
        '  }',
      );
    }
  }
  lines.push('}', 'secrets {', ...secrets, '}');
  return `${lines.join('\n')}\n`;
}

/** A section or key name Bulwark chose itself; anything else is refused. */
function swanKey(name: string): string {
  if (!isOwnName(name) || name.endsWith('.pem')) throw renderRefused('strongSwan configuration', 'connection name', 'not a name Bulwark assigns');
  return name;
}

export interface CharonInstance {
  /** The daemon's own section name (`charon-systemd`, `charon`): settings are read from it. */
  daemon: string;
  plugins: string[];
  viciSocket: string;
}

/** strongswan.conf of one appliance's charon: its plugins, its own VICI socket, logging to stderr (read by the supervisor). */
export function renderStrongswanConf(instance: CharonInstance): string {
  const socket = swanValue(`unix://${instance.viciSocket}`, 'vici socket', (v) => /^unix:\/\/(\/[A-Za-z0-9._+-]+)+$/.test(v));
  const plugins = instance.plugins.map((plugin) => {
    if (!/^[a-z0-9-]{1,40}$/.test(plugin)) throw renderRefused('strongSwan configuration', 'plugins', 'not a plugin name');
    return plugin;
  });
  if (!/^[a-z-]{1,20}$/.test(instance.daemon)) throw renderRefused('strongSwan configuration', 'daemon', 'not a daemon name');
  return [
    '# Bulwark: the strongSwan settings of this appliance\'s own charon (generated; do not edit).',
    `${instance.daemon} {`,
    `  load = ${plugins.join(' ')}`,
    '  install_virtual_ip = no',
    '  plugins {',
    `    vici { socket = ${socket} }`,
    '  }',
    '  filelog {',
    '    stderr {',
    '      default = 1',
    '    }',
    '  }',
    '  journal { default = -1 }',
    '}',
    'swanctl {',
    '  load = pem pkcs1 pkcs8 x509 openssl',
    `  socket = ${socket}`,
    '}',
    '',
  ].join('\n');
}
