/**
 * What the main pf ruleset must provide before Bulwark's anchor means anything: pf enabled, and the four
 * anchor hooks in /etc/pf.conf, the filter hook last (rules after it would override Bulwark's non-quick
 * decisions, as pf's last match decides). Without them `pfctl -a bulwark -f -` "succeeds" into an anchor
 * nothing evaluates. Each problem names the exact line to add. pfctl's own output is parsed, never
 * repeated to a client.
 */
import { runCommand } from '../exec.js';
import { PF_ANCHOR } from '../../compile/compiled.js';

/** The lines /etc/pf.conf needs, in pf.conf's order (translation hooks, then the filter hook at the end). */
export const PF_CONF_HOOKS = {
  nat: `nat-anchor "${PF_ANCHOR}"`,
  rdr: `rdr-anchor "${PF_ANCHOR}"`,
  binat: `binat-anchor "${PF_ANCHOR}"`,
  filter: `anchor "${PF_ANCHOR}"`,
} as const;

const hookLine = (keyword: string) => new RegExp(`^${keyword} "${PF_ANCHOR}"(\\s|$)`);

/** Problems found in `pfctl -s info`, `pfctl -s nat` and `pfctl -s rules` output (main ruleset). */
export function pfSetupProblems(info: string, natRules: string, filterRules: string): string[] {
  const problems: string[] = [];
  if (!/Status:\s+Enabled/i.test(info)) {
    problems.push('pf is disabled: set pf_enable="YES" in /etc/rc.conf and run "service pf start" (or "pfctl -e")');
  }
  const translation = natRules.split('\n').map((l) => l.trim());
  for (const keyword of ['nat-anchor', 'rdr-anchor', 'binat-anchor'] as const) {
    if (!translation.some((line) => hookLine(keyword).test(line))) {
      problems.push(`/etc/pf.conf lacks the hook for Bulwark's ${keyword.split('-')[0]} rules: add the line ${keyword} "${PF_ANCHOR}" before the filter rules and reload pf.conf (pfctl -f /etc/pf.conf)`);
    }
  }
  const filter = filterRules.split('\n').map((l) => l.trim()).filter(Boolean);
  const at = filter.findIndex((line) => hookLine('anchor').test(line));
  if (at < 0) {
    problems.push(`/etc/pf.conf lacks the hook for Bulwark's filter rules: add the line ${PF_CONF_HOOKS.filter} as the last rule and reload pf.conf (pfctl -f /etc/pf.conf)`);
  } else if (at !== filter.length - 1) {
    const after = filter.length - 1 - at;
    problems.push(`in /etc/pf.conf, ${after} rule${after === 1 ? '' : 's'} come${after === 1 ? 's' : ''} after the line ${PF_CONF_HOOKS.filter}; it must be the last rule (move it to the end and reload pf.conf)`);
  }
  return problems;
}

/** Reads the main ruleset with pfctl and reports what is missing; undefined when pfctl cannot be run. */
export async function readPfSetupProblems(pfctl = 'pfctl'): Promise<string[] | undefined> {
  const info = await runCommand(pfctl, ['-s', 'info']);
  const nat = await runCommand(pfctl, ['-s', 'nat']);
  const rules = await runCommand(pfctl, ['-s', 'rules']);
  if ([info, nat, rules].some((r) => r.code !== 0)) return undefined;
  return pfSetupProblems(info.stdout, nat.stdout, rules.stdout);
}

/** `net.pf.request_maxcount`: the most addresses one table may receive in one request (FreeBSD default 65535). */
export const PF_DEFAULT_REQUEST_MAXCOUNT = 65_535;

export async function readRequestMaxcount(): Promise<number> {
  const result = await runCommand('sysctl', ['-n', 'net.pf.request_maxcount']);
  const value = Number(result.stdout.trim());
  return result.code === 0 && Number.isInteger(value) && value > 0 ? value : PF_DEFAULT_REQUEST_MAXCOUNT;
}

/** Tables the anchor text declares, with how many addresses each loads. */
export function declaredTables(text: string): Map<string, number> {
  const tables = new Map<string, number>();
  for (const match of text.matchAll(/^table <([^>]+)> persist \{(.*)\}$/gm)) {
    const inside = match[2].trim();
    tables.set(match[1], inside ? inside.split(',').length : 0);
  }
  return tables;
}
