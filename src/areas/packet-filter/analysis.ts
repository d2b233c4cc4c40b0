/**
 * GET /rules/analysis and the warnings a rule write answers: the schemas, and the step from the stored
 * configuration to the pure analysis (compile/rule-analysis.ts).
 */
import { Type, type Static } from 'typebox';
import { HttpError } from '../../core/errors.js';
import { CompileError } from '../../compile/firewall-model.js';
import { analyseRules, type RuleAnalysis } from '../../compile/rule-analysis.js';
import { StringEnum } from '../../model/schema-helpers.js';
import type { PacketFilterService } from './service.js';
import { PluginFinding } from './plugin-findings.js';

const Ids = Type.Array(Type.String());

export const AnalysisQuery = Type.Object({
  unused_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650, description: 'also list rules without a hit in this many days (hit counters)' })),
}, { additionalProperties: false });

export const UnusedRule = Type.Object({
  rule_id: Type.String(),
  last_hit_at: Type.Union([Type.String(), Type.Null()]),
  detail: Type.String(),
});
export type UnusedRuleEntry = Static<typeof UnusedRule>;

export const AnalysisAnswer = Type.Object({
  rules: Type.Integer({ description: 'rules analysed (active ones)' }),
  never_matches: Type.Array(Type.Object({
    rule_id: Type.String(), reason: StringEnum(['shadowed', 'empty_alias', 'address_family']), shadowed_by: Type.Optional(Ids), detail: Type.String(),
  })),
  redundant: Type.Array(Type.Object({ rule_id: Type.String(), covered_by: Ids, detail: Type.String() })),
  conflicts: Type.Array(Type.Object({ rule_id: Type.String(), other_rule_id: Type.String(), decides: Type.String(), detail: Type.String() })),
  empty_aliases: Type.Array(Type.Object({ alias: Type.String(), rule_ids: Ids, detail: Type.String() })),
  schedules_never_fire: Type.Array(Type.Object({ schedule_id: Type.String(), name: Type.String(), rule_ids: Ids, detail: Type.String() })),
  not_analysed: Type.Array(Type.Object({ rule_id: Type.String(), detail: Type.String() })),
  unused: Type.Optional(Type.Array(UnusedRule)),
  plugin_findings: Type.Array(PluginFinding, { description: 'findings running plugins added (PUT /plugins/{name}/provided/findings), each marked with its source plugin' }),
});

/** One warning of a rule write: a finding about the rule written (never blocking). */
export const RuleWarning = Type.Object({
  type: StringEnum(['never_matches', 'redundant', 'conflict', 'empty_alias', 'schedule_never_fires', 'not_analysed']),
  detail: Type.String(),
  /** The other rules the finding names. */
  rule_ids: Ids,
});
export type RuleWarningEntry = Static<typeof RuleWarning>;

/** The analysis of the stored rules; 409 when the stored configuration does not compile. */
export function analyseStored(pf: PacketFilterService, only?: string): RuleAnalysis & { rules: number; plugin_findings: Static<typeof PluginFinding>[] } {
  const config = pf.configFor(pf.storedSnapshot());
  try {
    return { rules: config.rules.filter((r) => r.data.status === 'active').length, ...analyseRules(config, { only }), plugin_findings: pf.pluginFindings.list() };
  } catch (error) {
    if (error instanceof CompileError) throw new HttpError(409, `the stored configuration does not compile: ${error.message}`);
    throw error;
  }
}

/** The findings about one rule as the warnings its write answers; none when the configuration does not compile. */
export function warningsFor(pf: PacketFilterService, id: string): RuleWarningEntry[] {
  let analysis: RuleAnalysis;
  try {
    analysis = analyseRules(pf.configFor(pf.storedSnapshot()), { only: id });
  } catch (error) {
    if (error instanceof CompileError) return [];
    throw error;
  }
  return [
    ...analysis.never_matches.map((n) => ({ type: 'never_matches' as const, detail: n.detail, rule_ids: n.shadowed_by ?? [] })),
    ...analysis.redundant.map((r) => ({ type: 'redundant' as const, detail: r.detail, rule_ids: r.covered_by })),
    ...analysis.conflicts.map((c) => ({ type: 'conflict' as const, detail: c.detail, rule_ids: [c.rule_id === id ? c.other_rule_id : c.rule_id] })),
    ...analysis.empty_aliases.map((a) => ({ type: 'empty_alias' as const, detail: a.detail, rule_ids: [] })),
    ...analysis.schedules_never_fire.map((s) => ({ type: 'schedule_never_fires' as const, detail: s.detail, rule_ids: [] })),
    ...analysis.not_analysed.map((n) => ({ type: 'not_analysed' as const, detail: n.detail, rule_ids: [] })),
  ];
}
