/**
 * The geo-IP part of the packet filter's ruleset, in each dialect: the sets (tables) and the rules that run
 * before user rules. Only names of ours and addresses formatted from numbers are written: no stored text.
 */
import { cidrElements, geoSetName, geoTableName, nftElements, type CompiledGeoIp } from './geoip-sets.js';
import type { NftChain, NftSet } from './nft-table.js';

/** The regular chain the filter's inbound chain jumps to before user rules. */
export const NFT_GEOIP_CHAIN = 'geoip';

/** The interval sets, one per action and family (none when no rule is active). */
export const nftGeoIpSets = (geo: CompiledGeoIp): NftSet[] =>
  geo.sets.map((set) => ({
    name: geoSetName(set.action, set.family),
    declaration: [`type ${set.family === 4 ? 'ipv4_addr' : 'ipv6_addr'}`, 'flags interval'],
    elements: nftElements(set),
  }));

/** The `geoip` chain the inbound filter chain jumps to before user rules (none when no rule is active). */
export function nftGeoIpChains(geo: CompiledGeoIp): NftChain[] {
  if (geo.sets.length === 0) return [];
  const rules = geo.sets.map((set) =>
    `${set.family === 4 ? 'ip' : 'ip6'} saddr @${geoSetName(set.action, set.family)} ${set.action === 'block' ? 'drop' : 'accept'} comment "geoip-${set.action}"`);
  return [{ name: NFT_GEOIP_CHAIN, rules }];
}

/** The jump the inbound filter chain makes before user rules (none without active rules). */
export const nftGeoIpJump = (geo: CompiledGeoIp): string[] => (geo.sets.length ? [`jump ${NFT_GEOIP_CHAIN} comment "geo-IP rules"`] : []);

const PER_LINE = 512;
const wrapped = (elements: string[], indent: string): string[] => {
  const lines: string[] = [];
  for (let i = 0; i < elements.length; i += PER_LINE) lines.push(`${indent}${elements.slice(i, i + PER_LINE).join(', ')}${i + PER_LINE < elements.length ? ',' : ''}`);
  return lines;
};

/** pf: one table per action (both families), then `block drop in quick` / `pass in quick` before user rules. */
export function pfGeoIpLines(geo: CompiledGeoIp): string[] {
  const out: string[] = [];
  for (const action of ['block', 'allow'] as const) {
    const sets = geo.sets.filter((s) => s.action === action);
    if (!sets.length) continue;
    const table = geoTableName(action);
    out.push(`table <${table}> persist {`, ...wrapped(sets.flatMap(cidrElements), '  ').map((l) => l.replace(/,$/, '')), '}');
    out.push(action === 'block' ? `block drop in quick from <${table}> label "geoip-block"` : `pass in quick from <${table}> label "geoip-allow"`);
  }
  return out;
}
