/**
 * The boot step's safe fallback (docs/appliance.md): loaded when the last applied ruleset is missing or refused at
 * boot. Inbound traffic and traffic routed through the box are dropped, except loopback, packets of connections
 * the box itself opened, IPv6 neighbour discovery, and management (every API listener's port — plain HTTP and
 * HTTPS — and SSH) from the LAN: the LAN
 * interfaces when interface roles name some, the private address ranges otherwise. Outbound traffic of the box
 * itself passes. It replaces the same table (anchor) as a full load, so Bulwark's own load at start replaces it.
 */
import { NFT_TABLE, PF_ANCHOR } from './compiled.js';
import { NFT_LOOPBACK } from './nftables.js';
import { PF_LOOPBACK } from './pf.js';

export interface FallbackInput {
  /** The ports of the API's listeners: plain HTTP (--listen) and HTTPS (--tls-listen, when on), as the anti-lockout rules. */
  apiPorts: readonly number[];
  /** Interfaces with the LAN role; empty: management is let in from private source addresses on any interface. */
  lanInterfaces: readonly string[];
}

/** SSH stays reachable from the LAN too: on a box being installed over SSH the fallback must not cut it. */
export const FALLBACK_SSH_PORT = 22;
/** Sources counted as the LAN while no interface has the LAN role (RFC 1918, RFC 4193, link-local). */
export const PRIVATE_V4 = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16'];
export const PRIVATE_V6 = ['fc00::/7', 'fe80::/10'];

/** An interface name both formats take as a bare word; others are left out rather than quoted into the file. */
const INTERFACE_NAME = /^[A-Za-z0-9_.-]{1,15}$/;

const managementPorts = (input: FallbackInput) => [...new Set([...input.apiPorts, FALLBACK_SSH_PORT])].sort((a, b) => a - b);
const lan = (input: FallbackInput) => input.lanInterfaces.filter((name) => INTERFACE_NAME.test(name));

export function renderNftFallback(input: FallbackInput): string {
  const ports = `{ ${managementPorts(input).join(', ')} }`;
  const interfaces = lan(input);
  const management = interfaces.length
    ? [`\t\tiifname { ${interfaces.map((name) => `"${name}"`).join(', ')} } fib daddr type local tcp dport ${ports} accept comment "fallback: management from LAN"`]
    : [
      `\t\tip saddr { ${PRIVATE_V4.join(', ')} } fib daddr type local tcp dport ${ports} accept comment "fallback: management from private sources"`,
      `\t\tip6 saddr { ${PRIVATE_V6.join(', ')} } fib daddr type local tcp dport ${ports} accept comment "fallback: management from private sources"`,
    ];
  return [
    '#!/usr/sbin/nft -f',
    `# Bulwark boot fallback (generated; do not edit): loaded when the last applied ruleset is missing or refused.`,
    `# Drops inbound and routed traffic except loopback, established, neighbour discovery and management from LAN.`,
    `table inet ${NFT_TABLE}`,
    `delete table inet ${NFT_TABLE}`,
    '',
    `table inet ${NFT_TABLE} {`,
    '\tchain filter_in {',
    '\t\ttype filter hook prerouting priority dstnat + 10; policy drop;',
    `\t\tiifname "${NFT_LOOPBACK}" accept comment "fallback: loopback"`,
    '\t\tct state established,related accept comment "fallback: state handling"',
    '\t\ticmpv6 type { nd-neighbor-solicit, nd-neighbor-advert, nd-router-solicit, nd-router-advert } accept comment "fallback: neighbour discovery"',
    ...management,
    '\t}',
    '}',
    '',
  ].join('\n');
}

export function renderPfFallback(input: FallbackInput): string {
  const ports = `{ ${managementPorts(input).join(' ')} }`;
  const interfaces = lan(input);
  const on = interfaces.length === 0 ? '' : interfaces.length === 1 ? ` on ${interfaces[0]}` : ` on { ${interfaces.join(' ')} }`;
  const from = interfaces.length ? 'any' : `{ ${[...PRIVATE_V4, ...PRIVATE_V6].join(' ')} }`;
  return [
    `# Bulwark boot fallback for pf anchor "${PF_ANCHOR}" (generated; do not edit): loaded when the last applied ruleset is missing or refused.`,
    '# Blocks inbound and routed traffic except loopback, established, neighbour discovery and management from LAN.',
    `block in all label "bulwark:fallback-block"`,
    `pass quick on ${PF_LOOPBACK} all no state label "bulwark:fallback-loopback"`,
    `pass in quick inet6 proto icmp6 icmp6-type { neighbrsol neighbradv routersol routeradv } no state label "bulwark:fallback-nd"`,
    `pass in quick${on} proto tcp from ${from} to (self) port ${ports} keep state label "bulwark:fallback-management"`,
    `pass out all keep state label "bulwark:fallback-out"`,
    '',
  ].join('\n');
}
