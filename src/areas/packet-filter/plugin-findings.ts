/**
 * Findings plugins add to GET /rules/analysis (docs/plugins.md, "Providers"): per plugin, the list it last sent,
 * kept in memory (the plugin sends it again after a restart) and dropped when the plugin is disabled. Each names a
 * stored rule; the text is plain text (the answer is JSON; never markup).
 */
import { Type, type Static } from 'typebox';
import { badRequest } from '../../core/errors.js';
import { StringEnum } from '../../model/schema-helpers.js';

export const FINDING_SEVERITIES = ['info', 'warning', 'critical'] as const;
export const MAX_FINDING_DETAIL = 500;
export const MAX_FINDINGS_PER_PLUGIN = 1000;

/** One finding as a plugin sends it. */
export const ProvidedFinding = Type.Object({
  rule_id: Type.String({ minLength: 1, maxLength: 64 }),
  severity: StringEnum([...FINDING_SEVERITIES]),
  detail: Type.String({ minLength: 1, maxLength: MAX_FINDING_DETAIL }),
}, { additionalProperties: false });
export type ProvidedFindingEntry = Static<typeof ProvidedFinding>;

/** One finding as /rules/analysis shows it: marked with the plugin that added it. */
export const PluginFinding = Type.Object({
  source: Type.String({ description: 'the plugin that added the finding' }),
  ...ProvidedFinding.properties,
});
export type PluginFindingEntry = Static<typeof PluginFinding>;

/** Control characters other than tab and newline: a finding is one readable text, not terminal or log directives. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/;

export class PluginFindings {
  private readonly byPlugin = new Map<string, ProvidedFindingEntry[]>();

  /** `ruleIds`: the ids of the stored rules (a finding must name one). */
  constructor(private readonly ruleIds: () => Set<string>) {}

  /** Replaces what `plugin` provided; 400 naming the first bad field (nothing is kept then). */
  replace(plugin: string, findings: ProvidedFindingEntry[]): number {
    const known = this.ruleIds();
    findings.forEach((finding, index) => {
      if (!known.has(finding.rule_id)) throw badRequest(`body.findings.${index}.rule_id: no rule has the id "${finding.rule_id}"`);
      if (CONTROL.test(finding.detail)) throw badRequest(`body.findings.${index}.detail must not contain control characters`);
    });
    if (findings.length === 0) this.byPlugin.delete(plugin);
    else this.byPlugin.set(plugin, findings.map(({ rule_id, severity, detail }) => ({ rule_id, severity, detail })));
    return findings.length;
  }

  remove(plugin: string): void {
    this.byPlugin.delete(plugin);
  }

  /** Every plugin's findings about rules that still exist, marked with their source. */
  list(): PluginFindingEntry[] {
    const known = this.ruleIds();
    return [...this.byPlugin].flatMap(([source, findings]) => findings.filter((f) => known.has(f.rule_id)).map((f) => ({ source, ...f })));
  }
}
