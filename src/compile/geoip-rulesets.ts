/**
 * The geo-IP part of the packet filter's ruleset, in each dialect: the sets (tables) and the rules that run
 * before user rules. Only names of ours and addresses formatted from numbers are written: no stored text.
 */
import { cidrElements, geoSetName, geoTableName, nftElements, type CompiledGeoIp } from './geoip-sets.js';

/** The regular chain the filter's inbound chain jumps to before user rules. */
export const NFT_GEOIP_CHAIN = 'geoip';
const PER_LINE = 512;

const wrapped = (elements: string[], indent: string): string[] => {
  const lines: string[] = [];
  for (let i = 0; i < elements.length; i += PER_LINE) lines.push(`${indent}${elements.slice(i, i + PER_LINE).join(', ')}${i + PER_LINE < elements.length ? ',' : ''}`);
  return lines;
};

/** Set declarations and the `geoip` chain, as lines inside `table inet …` (tab-indented); empty when no rule is active. */
export function nftGeoIpDeclarations(geo: CompiledGeoIp): string[] {
  if (geo.sets.length === 0) return [];
  const out: string[] = [];
  for (const set of geo.sets) {
    out.push(`\tset ${geoSetName(set.action, set.family)} {`, `\t\ttype ${set.family === 4 ? 'ipv4_addr' : 'ipv6_addr'}`, '\t\tflags interval', '\t\telements = {');
    out.push(...wrapped(nftElements(set), '\t\t\t'), '\t\t}', '\t}');
  }
  out.push(`\tchain ${NFT_GEOIP_CHAIN} {`);
  for (const set of geo.sets) {
    const word = set.family === 4 ? 'ip' : 'ip6';
    out.push(`\t\t${word} saddr @${geoSetName(set.action, set.family)} ${set.action === 'block' ? 'drop' : 'accept'} comment "geoip-${set.action}"`);
  }
  out.push('\t}');
  return out;
}

/** The jump the inbound filter chain makes before user rules (none without active rules). */
export const nftGeoIpJump = (geo: CompiledGeoIp): string[] => (geo.sets.length ? [`jump ${NFT_GEOIP_CHAIN} comment "geo-IP rules"`] : []);

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
