import { useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import type { ApiClient } from '../api/client';
import type { Rule } from '../api/types';
import { DataTable } from '../components/data-table';
import { ErrorAlert, messageOf } from '../components/error-alert';
import { formatBytes, formatCount, formatValue } from '../components/format';
import { deleteConfirmed, saveEdit, type Editing } from '../components/record-editor';
import { Sparkline } from '../components/sparkline';
import { SettingsSection } from '../components/settings-form';
import { TextView } from '../components/text-view';
import { useLoad } from '../components/use-load';
import { RuleForm } from './rule-form';
import { PacketTest, type Simulation } from './packet-test';
import { findingsByRule, type RuleAnalysis } from './rule-findings';

interface RuleCounter {
  name: string;
  packets: number;
  bytes: number;
}

/** The rule being edited, with the ETag it was read with (sent back as If-Match). */
interface RuleEditing {
  rule: Rule | null;
  etag: string | null;
}

const endpoint = (address: string, port: Rule['rule_match']['src_port'], inverted: boolean) =>
  `${inverted ? 'not ' : ''}${address}${port ? `:${formatValue(port)}` : ''}`;

/** Names per /metrics/series request: the query's `name` holds at most 2,000 characters (49 per rule series). */
const SERIES_PER_REQUEST = 35;
/** Sparklines for the first rules only: 10 requests at most per load, however long the list. */
const SPARKLINE_RULES = 350;

/**
 * Each rule's hits over the last hour, a point a minute, from the series the hit counters record
 * (`rule.<id>.packets`, src/areas/packet-filter/hit-counters.ts: the packets counted since the previous sample);
 * a minute's point is the mean of the samples taken in it. A rule not sampled yet has none, nor do rules past
 * the first SPARKLINE_RULES.
 */
async function hitHistory(api: ApiClient, rules: readonly Rule[]): Promise<Map<string, number[]>> {
  const history = new Map<string, number[]>();
  if (rules.length === 0) return history;
  const { names } = await api.get<{ names: string[] }>('/metrics/list');
  const recorded = new Set(names);
  const wanted = rules.slice(0, SPARKLINE_RULES).map((rule) => `rule.${rule.id}.packets`).filter((name) => recorded.has(name));
  for (let start = 0; start < wanted.length; start += SERIES_PER_REQUEST) {
    const answer = await api.get<{ series: { name: string; points: { v: number }[] }[] }>('/metrics/series', {
      name: wanted.slice(start, start + SERIES_PER_REQUEST).join(','),
      range_secs: 3600,
      resolution: 'minute',
    });
    for (const series of answer.series) history.set(series.name.slice('rule.'.length, -'.packets'.length), series.points.map((point) => point.v));
  }
  return history;
}

/** Firewall rules in evaluation order, with hit counters, reordering and the create/edit form. */
export function RulesPage() {
  const { api, can } = useSession();
  const mayWrite = can('rules:write');
  const rules = useLoad(() => api.get<Rule[]>('/rules'), 'rules');
  // Hit counters come from the packet filter (per rule id in the counter's name); none on a fresh ruleset.
  const counters = useLoad(
    () => (can('dashboard:view') ? api.get<{ rule_counters: RuleCounter[] }>('/metrics').then((m) => m.rule_counters) : Promise.resolve([])),
    'rule-counters',
  );
  // The analysis' findings (shadowed, redundant, never matching, conflicts) as badges on the rules they concern.
  const analysis = useLoad(() => api.get<RuleAnalysis>('/rules/analysis'), 'rule-analysis');
  const [editing, setEditing] = useState<RuleEditing | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [simulation, setSimulation] = useState<Simulation | null>(null);
  const list = rules.data ?? [];
  const counterOf = (rule: Rule) => counters.data?.find((counter) => counter.name.includes(rule.id));
  const numberOf = (id: string) => {
    const index = list.findIndex((rule) => rule.id === id);
    return index < 0 ? undefined : index + 1;
  };
  const ruleName = (id: string) => {
    const rule = list.find((r) => r.id === id);
    const name = rule?.description ?? rule?.label;
    return `#${numberOf(id) ?? '?'}${name ? ` "${name}"` : ''}`;
  };
  const history = useLoad(() => (can('dashboard:view') ? hitHistory(api, list) : Promise.resolve(new Map<string, number[]>())), `rule-history-${list.length}-${list[0]?.id}-${list[list.length - 1]?.id}`);
  const findings = analysis.data ? findingsByRule(analysis.data, numberOf) : new Map<string, never[]>();
  const traceOf = (rule: Rule) => simulation?.rules.find((entry) => entry.rule_id === rule.id);
  const reloadAll = () => {
    rules.reload();
    counters.reload();
    analysis.reload();
    history.reload();
  };

  const run = async (action: () => Promise<void>) => {
    setError(null);
    try {
      await action();
      reloadAll();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };

  const move = (index: number, by: -1 | 1) =>
    run(async () => {
      const ids = list.map((rule) => rule.id);
      [ids[index], ids[index + by]] = [ids[index + by], ids[index]];
      await api.put('/rules/reorder', { rule_ids: ids });
    });

  const edit = (rule: Rule) =>
    run(async () => {
      const read = await api.request<Rule>('GET', `/rules/${rule.id}`);
      setEditing({ rule: read.data, etag: read.etag });
    });

  const remove = (rule: Rule) =>
    void run(async () => {
      await deleteConfirmed(api, `/rules/${rule.id}`, true, () => confirm(`Delete the rule "${rule.description ?? rule.label ?? rule.id}"?`), 'rule').catch((failure: unknown) => {
        reloadAll(); // a 412: the list shows what is stored now
        throw failure;
      });
    });

  return (
    <div class="page">
      <header class="page-head">
        <h1>Rules</h1>
        {mayWrite && !editing && (
          <button type="button" onClick={() => setEditing({ rule: null, etag: null })}>
            Add rule
          </button>
        )}
        {mayWrite && <a href="/rules/changes">Edit several rules at once (change set)</a>}
      </header>
      <p class="help">Rules are evaluated top to bottom. Changes are stored at once and take effect when applied.</p>
      {editing && (
        <RuleForm
          key={editing.rule?.id ?? 'new'}
          rule={editing.rule}
          onCancel={() => setEditing(null)}
          onSubmit={async (body) => {
            // a stale ETag (someone else changed the rule) reloads it into the form and says so
            const reloaded = (fresh: Editing) => setEditing({ rule: fresh.record as unknown as Rule, etag: fresh.etag });
            if (editing.rule) await saveEdit(api, { path: `/rules/${editing.rule.id}`, record: { ...editing.rule }, etag: editing.etag }, body, 'rule', reloaded);
            else await api.post('/rules', body);
            setEditing(null);
            reloadAll();
          }}
        />
      )}
      <PacketTest api={api} ruleName={ruleName} onResult={setSimulation} />
      <ErrorAlert message={error ?? rules.error ?? (analysis.error && `Rule analysis: ${analysis.error}`)} />
      {!rules.error && (
        <DataTable
          caption="Firewall rules"
          rows={list}
          rowClass={(rule) => (traceOf(rule)?.outcome === 'decides' ? 'decides' : undefined)}
          empty={rules.loading && !rules.data ? 'Loading…' : 'No rules yet.'}
          columns={[
            {
              key: 'order',
              label: '#',
              render: (rule) => (
                <>
                  {list.indexOf(rule) + 1}
                  {traceOf(rule) && (
                    // what the tested packet met here; the reason is the API's (e.g. the condition that failed)
                    <small class={`outcome ${traceOf(rule)!.outcome}`} title={traceOf(rule)!.reason}>
                      {traceOf(rule)!.outcome === 'decides' ? 'decides the test packet' : traceOf(rule)!.outcome.replace(/_/g, ' ')}
                    </small>
                  )}
                </>
              ),
            },
            { key: 'action', label: 'Action', render: (rule) => <span class={`action ${rule.action}`}>{rule.action}</span> },
            { key: 'direction', label: 'Direction' },
            { key: 'interface', label: 'Interface', render: (rule) => rule.interface ?? 'all' },
            { key: 'protocol', label: 'Protocol' },
            { key: 'source', label: 'Source', render: (rule) => endpoint(rule.rule_match.src_addr, rule.rule_match.src_port, rule.src_invert) },
            { key: 'destination', label: 'Destination', render: (rule) => endpoint(rule.rule_match.dst_addr, rule.rule_match.dst_port, rule.dst_invert) },
            { key: 'description', label: 'Description' },
            { key: 'status', label: 'Status' },
            {
              key: 'hits',
              label: 'Hits',
              render: (rule) => {
                const counter = rule.hits ?? counterOf(rule);
                const points = history.data?.get(rule.id);
                return (
                  <>
                    {counter ? `${formatCount(counter.packets)} packets, ${formatBytes(counter.bytes)}` : '—'}
                    {points && points.length > 0 && <Sparkline values={points} label={`Rule ${list.indexOf(rule) + 1}'s hits over the last hour (packets per counter sample, by minute)`} />}
                  </>
                );
              },
            },
            {
              key: 'findings',
              label: 'Analysis',
              render: (rule) => {
                const found = findings.get(rule.id) ?? [];
                if (found.length === 0) return analysis.data ? 'ok' : '—';
                return (
                  <ul class="findings">
                    {found.map((finding) => (
                      <li key={finding.label + finding.detail}>
                        <span class={`badge ${finding.tone}`}>{finding.label}</span> <small>{finding.detail}</small>
                      </li>
                    ))}
                  </ul>
                );
              },
            },
          ]}
          actions={
            mayWrite
              ? (rule, index) => (
                  <>
                    <button type="button" class="secondary" disabled={index === 0} onClick={() => move(index, -1)} aria-label={`Move rule ${index + 1} up`}>
                      Up
                    </button>
                    <button type="button" class="secondary" disabled={index === list.length - 1} onClick={() => move(index, 1)} aria-label={`Move rule ${index + 1} down`}>
                      Down
                    </button>
                    <button type="button" class="secondary" onClick={() => edit(rule)}>
                      Edit
                    </button>
                    <button type="button" class="danger" onClick={() => remove(rule)}>
                      Delete
                    </button>
                  </>
                )
              : undefined
          }
        />
      )}
      <SettingsSection
        title="Logging of blocked packets"
        path="/rules/block-logging"
        writePermission="rules:write"
        fields={[{ name: 'enabled', label: 'Log the packets the default policy blocks', kind: 'checkbox' }]}
      />
      <TextView title="Rules the appliance adds" path="/rules/system" text={(lines) => (lines as string[]).join('\n')} />
    </div>
  );
}
