/**
 * GET /rules/analysis as findings per rule, for the badges on the rules page. The API's explanations name rules
 * by id; the console names them by their place in the list (#3), as the table does.
 */

export interface RuleAnalysis {
  rules: number;
  never_matches: { rule_id: string; reason: 'shadowed' | 'empty_alias' | 'address_family'; shadowed_by?: string[]; detail: string }[];
  redundant: { rule_id: string; covered_by: string[]; detail: string }[];
  conflicts: { rule_id: string; other_rule_id: string; decides: string; detail: string }[];
  empty_aliases: { alias: string; rule_ids: string[]; detail: string }[];
  schedules_never_fire: { schedule_id: string; name: string; rule_ids: string[]; detail: string }[];
  not_analysed: { rule_id: string; detail: string }[];
  /** What running plugins report about rules (docs/plugins.md, "Providers"); plain text, shown as text. */
  plugin_findings?: PluginFinding[];
}

export interface PluginFinding {
  source: string;
  rule_id: string;
  severity: 'info' | 'warning' | 'critical';
  detail: string;
}

/** A plugin's finding as a badge: its source and severity, and the plugin's words as the explanation. */
export const pluginBadge = (finding: PluginFinding): Finding => ({
  label: `${finding.source}: ${finding.severity}`,
  tone: finding.severity === 'info' ? 'info' : 'warn',
  detail: `Reported by the plugin ${finding.source}: ${finding.detail}`,
});

export interface Finding {
  /** The badge's text. */
  label: string;
  /** `warn` for a rule that does nothing (or the same as others), `info` otherwise. */
  tone: 'warn' | 'info';
  /** The explanation, with rules named by their number. */
  detail: string;
}

const NEVER_MATCHES: Record<RuleAnalysis['never_matches'][number]['reason'], string> = {
  shadowed: 'Shadowed',
  empty_alias: 'Never matches',
  address_family: 'Never matches',
};

/** Findings by rule id; `numberOf` gives a rule's place in the list (1-based), or undefined. */
export function findingsByRule(analysis: RuleAnalysis, numberOf: (id: string) => number | undefined): Map<string, Finding[]> {
  const byRule = new Map<string, Finding[]>();
  const named = (text: string) => text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, (id) => (numberOf(id) ? `#${numberOf(id)}` : id));
  const add = (id: string, finding: Finding) => byRule.set(id, [...(byRule.get(id) ?? []), { ...finding, detail: named(finding.detail) }]);
  for (const n of analysis.never_matches) add(n.rule_id, { label: NEVER_MATCHES[n.reason], tone: 'warn', detail: n.detail });
  for (const r of analysis.redundant) add(r.rule_id, { label: 'Redundant', tone: 'warn', detail: r.detail });
  for (const c of analysis.conflicts) {
    add(c.rule_id, { label: 'Conflict', tone: 'info', detail: c.detail });
    add(c.other_rule_id, { label: 'Conflict', tone: 'info', detail: c.detail });
  }
  for (const s of analysis.schedules_never_fire) for (const id of s.rule_ids) add(id, { label: 'Schedule never fires', tone: 'warn', detail: s.detail });
  for (const n of analysis.not_analysed) add(n.rule_id, { label: 'Not analysed', tone: 'info', detail: n.detail });
  for (const p of analysis.plugin_findings ?? []) add(p.rule_id, pluginBadge(p));
  return byRule;
}
