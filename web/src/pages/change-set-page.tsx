import { useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import type { Rule } from '../api/types';
import { DataTable } from '../components/data-table';
import { ErrorAlert, Notice, messageOf } from '../components/error-alert';
import { formatValue } from '../components/format';
import { useLoad } from '../components/use-load';
import { RuleForm } from './rule-form';

/** One operation of POST /changes (docs/changes.md), with the sentence the list shows for it. */
interface StagedOperation {
  op: 'create' | 'update' | 'delete';
  path: string;
  body?: Record<string, unknown>;
  /** The rule's ETag as read when the edit was staged: someone else's change meanwhile makes the set a 412. */
  if_match?: string;
  summary: string;
}

interface ChangeSetAnswer {
  dry_run: boolean;
  applied: boolean;
  changes: { index: number; op: string; path: string; kind: string; id: string | null; before: Record<string, unknown> | null; after: Record<string, unknown> | null }[];
}

/** Fields every write touches: not what the administrator changed. */
const BOOKKEEPING = new Set(['updated_at', 'created_at', 'priority', 'warnings', 'hits', 'last_hit_at']);

/** What one change does, as the preview lists it: the fields whose values differ. */
function differences(change: ChangeSetAnswer['changes'][number]): string {
  if (!change.before || !change.after) return '';
  const keys = new Set([...Object.keys(change.before), ...Object.keys(change.after)]);
  return [...keys]
    .filter((key) => !BOOKKEEPING.has(key) && JSON.stringify(change.before![key]) !== JSON.stringify(change.after![key]))
    .map((key) => `${key}: ${formatValue(change.before![key])} → ${formatValue(change.after![key])}`)
    .join('; ');
}

const nameOf = (rule: { description?: unknown; label?: unknown; id?: unknown } | null | undefined) =>
  String(rule?.description ?? rule?.label ?? rule?.id ?? 'rule');

/**
 * Several rule edits made at once, all or none: stage creates, edits, enables/disables and deletes, preview them
 * (POST /changes?dry_run=true: every write made, then rolled back) and apply them in one transaction. Applying
 * stores them like single writes: the pending banner then offers Apply to the firewall.
 */
export function ChangeSetPage() {
  const { api, can } = useSession();
  const mayWrite = can('rules:write');
  const rules = useLoad(() => (mayWrite ? api.get<Rule[]>('/rules') : Promise.resolve([] as Rule[])), 'change-set-rules');
  const [staged, setStaged] = useState<StagedOperation[]>([]);
  const [form, setForm] = useState<{ rule: Rule | null; etag: string | null } | null>(null);
  const [preview, setPreview] = useState<ChangeSetAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  if (!mayWrite) {
    return (
      <div class="page">
        <header class="page-head">
          <h1>Change set</h1>
        </header>
        <p class="help">Change sets edit several rules at once; preparing one needs the rules:write permission.</p>
      </div>
    );
  }

  const stage = (operation: StagedOperation) => {
    setStaged((current) => [...current, operation]);
    setPreview(null);
    setDone(null);
  };
  const unstage = (index: number) => {
    setStaged((current) => current.filter((_, i) => i !== index));
    setPreview(null);
  };
  /** Reads the rule now, so the staged operation carries the tag of what the administrator saw. */
  const read = async (rule: Rule) => api.request<Rule>('GET', `/rules/${rule.id}`);
  const guarded = (action: () => Promise<void>) => async () => {
    setError(null);
    setBusy(true);
    try {
      await action();
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  const operations = () => staged.map(({ summary: _summary, ...operation }) => operation);
  const run = guarded(async () => {
    const answer = await api.request<ChangeSetAnswer>('POST', '/changes', { query: { dry_run: true }, body: { operations: operations() }, changesNothing: true });
    setPreview(answer.data);
  });
  const apply = guarded(async () => {
    const answer = await api.post<ChangeSetAnswer>('/changes', { operations: operations() });
    setDone(`Change set stored: ${answer.changes.length} change${answer.changes.length === 1 ? '' : 's'}. Apply them to the firewall from the pending changes banner.`);
    setStaged([]);
    setPreview(null);
    rules.reload();
  });
  const toggle = (rule: Rule) =>
    guarded(async () => {
      const current = await read(rule);
      const status = current.data.status === 'disabled' ? 'active' : 'disabled';
      stage({ op: 'update', path: `/api/v1/rules/${rule.id}`, body: { status }, if_match: current.etag ?? undefined, summary: `${status === 'active' ? 'Enable' : 'Disable'} "${nameOf(rule)}"` });
    })();
  const remove = (rule: Rule) =>
    guarded(async () => {
      const current = await read(rule);
      stage({ op: 'delete', path: `/api/v1/rules/${rule.id}`, if_match: current.etag ?? undefined, summary: `Delete "${nameOf(rule)}"` });
    })();
  const edit = (rule: Rule) =>
    guarded(async () => {
      const current = await read(rule);
      setForm({ rule: current.data, etag: current.etag });
    })();

  const list = rules.data ?? [];
  return (
    <div class="page">
      <header class="page-head">
        <h1>Change set</h1>
        {!form && (
          <button type="button" onClick={() => setForm({ rule: null, etag: null })}>
            Stage a new rule
          </button>
        )}
      </header>
      <p class="help">
        Stage several rule edits, preview what they do together, then store them all or none (one transaction). Nothing is written until you
        apply; an edit someone else makes meanwhile refuses the whole set (412).
      </p>
      {form && (
        <RuleForm
          key={form.rule?.id ?? 'new'}
          rule={form.rule}
          submitLabel="Add to change set"
          onCancel={() => setForm(null)}
          onSubmit={async (body) => {
            if (form.rule) stage({ op: 'update', path: `/api/v1/rules/${form.rule.id}`, body, if_match: form.etag ?? undefined, summary: `Edit "${nameOf(form.rule)}"` });
            else stage({ op: 'create', path: '/api/v1/rules', body, summary: `Create "${nameOf(body as { description?: unknown })}"` });
            setForm(null);
          }}
        />
      )}
      <ErrorAlert message={error ?? rules.error} />
      {done && <Notice>{done}</Notice>}
      <section class="panel" aria-labelledby="staged-title">
        <h2 id="staged-title">Staged ({staged.length})</h2>
        {staged.length === 0 ? (
          <p class="help">Nothing staged yet: use the buttons of the rules below, or stage a new rule.</p>
        ) : (
          <ol class="staged">
            {staged.map((operation, index) => (
              <li key={`${index}-${operation.summary}`}>
                {operation.summary}{' '}
                <button type="button" class="secondary" onClick={() => unstage(index)} aria-label={`Unstage ${index + 1}: ${operation.summary}`}>
                  Unstage
                </button>
              </li>
            ))}
          </ol>
        )}
        <div class="form-actions">
          <button type="button" class="secondary" disabled={busy || staged.length === 0} onClick={run}>
            Preview
          </button>
          <button type="button" disabled={busy || !preview} onClick={apply}>
            Apply change set
          </button>
        </div>
        {preview && (
          <DataTable
            caption="Preview of the change set"
            rows={preview.changes}
            rowKey={(change) => String(change.index)}
            columns={[
              { key: 'index', label: '#', render: (change) => String(change.index + 1) },
              { key: 'op', label: 'Operation' },
              { key: 'rule', label: 'Rule', render: (change) => nameOf(change.after ?? change.before) },
              { key: 'what', label: 'What changes', render: (change) => (change.op === 'update' ? differences(change) || 'nothing' : change.op === 'create' ? 'new rule' : 'removed') },
            ]}
          />
        )}
      </section>
      <DataTable
        caption="Rules to stage edits of"
        rows={list}
        empty={rules.loading && !rules.data ? 'Loading…' : 'No rules yet.'}
        columns={[
          { key: 'order', label: '#', render: (rule) => String(list.indexOf(rule) + 1) },
          { key: 'action', label: 'Action', render: (rule) => <span class={`action ${rule.action}`}>{rule.action}</span> },
          { key: 'description', label: 'Description' },
          { key: 'status', label: 'Status' },
        ]}
        actions={(rule) => (
          <>
            <button type="button" class="secondary" onClick={() => edit(rule)} aria-label={`Stage an edit of "${nameOf(rule)}"`}>
              Edit
            </button>
            <button type="button" class="secondary" onClick={() => toggle(rule)} aria-label={`Stage ${rule.status === 'disabled' ? 'enabling' : 'disabling'} "${nameOf(rule)}"`}>
              {rule.status === 'disabled' ? 'Enable' : 'Disable'}
            </button>
            <button type="button" class="danger" onClick={() => remove(rule)} aria-label={`Stage deleting "${nameOf(rule)}"`}>
              Delete
            </button>
          </>
        )}
      />
    </div>
  );
}
