import { useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import { ApiError } from '../api/client';
import type { Row } from '../api/types';
import { DataTable } from '../components/data-table';
import { ErrorAlert, messageOf } from '../components/error-alert';
import { RecordForm, type FieldSpec } from '../components/record-form';
import { useLoad } from '../components/use-load';

/** The events a notification can be about (src/areas/events/schema.ts NOTIFY_EVENTS). */
const EVENTS = [
  'gateway_down', 'gateway_up', 'ids_alert', 'certificate_expiring', 'certificate_renewal_failed', 'drift_detected', 'drift_repaired',
  'commit_confirm_rolled_back', 'config_applied', 'config_restored', 'account_locked_out', 'daemon_crashed', 'daemon_restarted',
  'update_available', 'disk_nearly_full',
];
const SEVERITIES = ['', 'emergency', 'alert', 'critical', 'error', 'warning', 'notice', 'info', 'debug'];

interface Rule {
  event: string;
  email: boolean;
  webhooks: string[];
  min_severity?: string;
  rate_limit_secs?: number;
}
interface Webhook { id: string; name: string }

const STALE = 'The event routing was changed by someone else since it was read; nothing was saved. The table now shows what is stored: make your change again.';

/** Where a rule is being edited: a new one (index null) or the rule at `index`. */
type Editing = { index: number | null };

/**
 * Event routing: the list of `/notify/events` rules. The API replaces the list as a whole (PUT), so each add,
 * edit and delete sends the list changed; webhooks are chosen by name and sent as their ids (a name that is no
 * webhook is sent as typed, so the API's 400 names the field).
 */
export function EventRouting() {
  const { api, can } = useSession();
  const mayWrite = can('settings:write');
  const [generation, setGeneration] = useState(0);
  // read with its ETag: each save sends it as If-Match, so an edit made meanwhile is refused (412), never overwritten
  const rules = useLoad(() => api.request<Rule[]>('GET', '/notify/events'), `events-${generation}`);
  const hooks = useLoad(() => api.get<Webhook[]>('/notify/webhooks'), `hooks-${generation}`);
  const [editing, setEditing] = useState<Editing | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reload = () => setGeneration((value) => value + 1);
  const list = rules.data?.data ?? [];
  const nameOf = (id: string) => hooks.data?.find((hook) => hook.id === id)?.name ?? id;

  const fields: readonly FieldSpec[] = [
    { name: 'event', label: 'Event', kind: 'select', options: EVENTS },
    { name: 'email', label: 'E-mail', kind: 'checkbox' },
    { name: 'webhooks', label: 'Webhooks', kind: 'lines', hint: `webhook names, one per line${hooks.data?.length ? ` (${hooks.data.map((hook) => hook.name).join(', ')})` : ''}`, read: (record) => ((record.webhooks as string[]) ?? []).map(nameOf).join('\n') },
    { name: 'min_severity', label: 'Minimum severity', kind: 'select', options: SEVERITIES, hint: 'empty: every severity' },
    { name: 'rate_limit_secs', label: 'Rate limit (seconds)', kind: 'number', hint: 'one notification per event key, then one summary per window (default 300)' },
  ];

  /** The rule as the API takes it: webhook names as ids (read now: one may have been added since), empty fields left out. */
  const ruleOf = async (body: Record<string, unknown>, base?: Rule): Promise<Rule> => {
    const merged: Record<string, unknown> = { ...base, ...body };
    if (Array.isArray(body.webhooks)) {
      const current = await api.get<Webhook[]>('/notify/webhooks');
      merged.webhooks = (body.webhooks as string[]).map((name) => current.find((hook) => hook.name === name)?.id ?? name);
    }
    for (const key of ['min_severity', 'rate_limit_secs']) if (merged[key] === null || merged[key] === '') delete merged[key];
    return merged as unknown as Rule;
  };

  const save = async (next: Rule[]) => {
    try {
      await api.update('/notify/events', next, rules.data?.etag ?? null);
    } catch (failure) {
      if (!(failure instanceof ApiError && failure.status === 412)) throw failure;
      // the rule being edited may no longer be where it was: the form closes and the table shows what is stored
      setError(STALE);
    }
    setEditing(null);
    reload();
  };

  const remove = async (index: number) => {
    if (!confirm(`Delete the rule for ${list[index]!.event}?`)) return;
    setError(null);
    try {
      await save(list.filter((_, at) => at !== index));
    } catch (failure) {
      setError(messageOf(failure));
    }
  };

  const editingRule = editing?.index !== null && editing ? list[editing.index] : undefined;
  return (
    <section class="panel" aria-label="Event routing">
      <header class="panel-head">
        <h2>Event routing</h2>
        <span class="count">{rules.data ? `${list.length} total` : ''}</span>
        {mayWrite && rules.data && !editing && (
          <button
            type="button"
            onClick={() => {
              reload(); // the webhooks named in the hint, as they are now
              setEditing({ index: null });
            }}
          >
            Add rule
          </button>
        )}
      </header>
      {editing && (
        <RecordForm
          key={String(editing.index)}
          title={editing.index === null ? 'New rule' : 'Edit rule'}
          fields={fields}
          record={editingRule as unknown as Row | undefined}
          submitLabel={editing.index === null ? 'Create' : 'Save'}
          onCancel={() => setEditing(null)}
          errorField={(path) => (path[0] === String(editing.index ?? list.length) ? path[1] : undefined)}
          onSubmit={async (body) => {
            setError(null);
            if (editing.index === null) return save([...list, await ruleOf(body)]);
            const changed = await ruleOf(body, list[editing.index]);
            return save(list.map((rule, at) => (at === editing.index ? changed : rule)));
          }}
        />
      )}
      <ErrorAlert message={rules.error ?? hooks.error ?? error} />
      <DataTable
        caption="Event routing"
        rows={list}
        empty={rules.loading && !rules.data ? 'Loading…' : 'No event is routed anywhere.'}
        rowKey={(row, index) => `${row.event}-${index}`}
        columns={[
          { key: 'event', label: 'Event' },
          { key: 'email', label: 'E-mail' },
          { key: 'webhooks', label: 'Webhooks', render: (row) => row.webhooks.map(nameOf).join(', ') },
          { key: 'min_severity', label: 'Minimum severity', render: (row) => row.min_severity ?? 'any' },
          { key: 'rate_limit_secs', label: 'Rate limit', render: (row) => `${row.rate_limit_secs ?? 300} s` },
        ]}
        actions={
          mayWrite && rules.data
            ? (_row, index) => (
                <>
                  <button type="button" class="secondary" onClick={() => setEditing({ index })}>
                    Edit
                  </button>
                  <button type="button" class="danger" onClick={() => void remove(index)}>
                    Delete
                  </button>
                </>
              )
            : undefined
        }
      />
    </section>
  );
}
