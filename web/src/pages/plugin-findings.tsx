import { useSession } from '../auth/session-context';
import type { Rule } from '../api/types';
import { DataTable } from '../components/data-table';
import { ErrorAlert } from '../components/error-alert';
import { useLoad } from '../components/use-load';
import { pluginBadge, type PluginFinding, type RuleAnalysis } from './rule-findings';

/**
 * What running plugins report about the rules (GET /rules/analysis `plugin_findings`, docs/plugins.md), each as the
 * badge the rules page puts on the rule, with the plugin's explanation and the rule named by its place in the list.
 * A plugin's detail is plain text: shown as text, never as markup.
 */
export function PluginFindings() {
  const { api, can } = useSession();
  const mayRead = can('rules:read');
  const loaded = useLoad(
    async () => (mayRead ? Promise.all([api.get<RuleAnalysis>('/rules/analysis'), api.get<Rule[]>('/rules')]) : null),
    `plugin-findings-${String(mayRead)}`,
  );
  if (!mayRead) return null;
  const [analysis, rules] = loaded.data ?? [null, []];
  const ruleName = (id: string) => {
    const index = rules.findIndex((rule) => rule.id === id);
    if (index < 0) return id;
    const rule = rules[index]!;
    return `#${index + 1} ${rule.description ?? rule.label ?? ''}`.trim();
  };
  return (
    <section class="panel" aria-label="Findings from plugins">
      <header class="panel-head">
        <h2>Findings from plugins</h2>
        <span class="count">{analysis ? `${analysis.plugin_findings?.length ?? 0} total` : ''}</span>
      </header>
      <p class="help">A running plugin may report findings about rules; they also show as badges on the Rules page.</p>
      <ErrorAlert message={loaded.error} />
      <DataTable<PluginFinding>
        caption="Findings from plugins"
        rows={analysis?.plugin_findings ?? []}
        empty={loaded.loading && !loaded.data ? 'Loading…' : 'No plugin reports anything about the rules.'}
        rowKey={(row, index) => `${row.source}-${row.rule_id}-${index}`}
        columns={[
          { key: 'source', label: 'Plugin' },
          { key: 'rule_id', label: 'Rule', render: (row) => ruleName(row.rule_id) },
          {
            key: 'finding',
            label: 'Finding',
            render: (row) => {
              const badge = pluginBadge(row);
              return (
                <>
                  <span class={`badge ${badge.tone}`}>{row.severity}</span> <small>{row.detail}</small>
                </>
              );
            },
          },
        ]}
      />
    </section>
  );
}
