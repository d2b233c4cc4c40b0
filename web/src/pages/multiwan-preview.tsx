import { useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import type { Row } from '../api/types';
import { ActionButton } from '../components/action-button';
import { DataTable } from '../components/data-table';
import { ErrorAlert, Notice } from '../components/error-alert';
import { RecordForm, type FieldSpec } from '../components/record-form';

/** What `POST /multiwan/preview` answers: the blast radius of a set of policies, nothing applied. */
interface BlastRadius {
  new_rules: string[];
  removed_rules: string[];
  affected_flows: Row[];
  would_strand_mgmt: boolean;
  validation: { severity: string; message: string }[];
  apply_commands: { command: string; input: string }[];
}

export const POLICY_FIELDS: readonly FieldSpec[] = [
  { name: 'name', label: 'Name', kind: 'text' },
  { name: 'priority', label: 'Priority', kind: 'number', hint: '1–65535, lowest first' },
  { name: 'action_kind', label: 'Send to', kind: 'select', options: ['set_gateway', 'set_group', 'set_instance'] },
  { name: 'target_id', label: 'Target id', kind: 'text', hint: 'the id of the gateway, group or instance' },
  { name: 'iface_in', label: 'Arriving on', kind: 'text', hint: 'interface; empty: any' },
  { name: 'protocol', label: 'Protocol', kind: 'select', options: ['any', 'tcp', 'udp', 'icmp', 'icmp6', 'gre', 'esp', 'ah', 'sctp'] },
  { name: 'src_addr', label: 'Source', kind: 'text', hint: 'address, CIDR or any' },
  { name: 'dst_addr', label: 'Destination', kind: 'text', hint: 'address, CIDR or any' },
  { name: 'dst_port', label: 'Destination port', kind: 'text', hint: 'e.g. 443 or 8000-8080' },
  { name: 'description', label: 'Description', kind: 'text' },
];

const lines = (items: readonly string[]) => (items.length === 0 ? 'none' : items.join('\n'));

/** The preview's answer: problems first, then what the packet filter would load and which flows would move. */
function Radius({ radius }: { radius: BlastRadius }) {
  return (
    <div class="preview" aria-label="Preview result" role="region">
      {radius.would_strand_mgmt && <p class="alert" role="alert">These policies would cut the management access to the appliance.</p>}
      <DataTable
        caption="Findings"
        rows={radius.validation as unknown as Row[]}
        columns={[
          { key: 'severity', label: 'Severity' },
          { key: 'message', label: 'Finding' },
        ]}
        empty="No findings."
      />
      <h3>Rules added</h3>
      <pre class="output" aria-label="Rules added">{lines(radius.new_rules)}</pre>
      <h3>Rules removed</h3>
      <pre class="output" aria-label="Rules removed">{lines(radius.removed_rules)}</pre>
      <DataTable
        caption="Flows that would change route"
        rows={radius.affected_flows}
        columns={[
          { key: 'protocol', label: 'Protocol' },
          { key: 'src', label: 'Source' },
          { key: 'dst', label: 'Destination' },
          { key: 'current_iface', label: 'Now via' },
          { key: 'future_iface', label: 'Then via' },
          { key: 'bytes', label: 'Bytes' },
        ]}
        empty="No live flow changes route."
      />
      <h3>What Apply would load</h3>
      {radius.apply_commands.map(({ command, input }) => (
        <details key={command}>
          <summary>{command}</summary>
          <pre class="output">{input || '(empty)'}</pre>
        </details>
      ))}
    </div>
  );
}

/**
 * Preview, then apply: the stored policies (and optionally one proposed) are compiled without loading anything
 * (`POST /multiwan/preview`), and Apply compiles and loads what is stored (`POST /multiwan/apply`).
 */
export function MultiWanPreview() {
  const { api, can } = useSession();
  const [radius, setRadius] = useState<BlastRadius | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  if (!can('multiwan:write')) return null;
  return (
    <section class="panel" aria-label="Preview and apply">
      <header class="panel-head">
        <h2>Preview and apply</h2>
      </header>
      <p class="help">
        Preview compiles the stored policies, with the one proposed here if it has a name, and shows what would change; nothing is loaded. Apply loads
        the stored policies into the packet filter.
      </p>
      <RecordForm
        title="Proposed policy"
        fields={POLICY_FIELDS}
        submitLabel="Preview"
        keepValues
        onSubmit={async (proposed) => {
          setRadius(null);
          const stored = await api.get<Row[]>('/multiwan/policies');
          const policies = proposed.name ? [...stored, proposed] : stored;
          setRadius(await api.post<BlastRadius>('/multiwan/preview', { policies }));
        }}
      />
      <div class="actions">
        <ActionButton
          tone="primary"
          run={async () => {
            setMessage(null);
            const answer = await api.post<{ message: string; rules: number }>('/multiwan/apply');
            setMessage(`${answer.message} (${answer.rules} rules)`);
          }}
          onError={setError}
        >
          Apply policies
        </ActionButton>
      </div>
      <ErrorAlert message={error} />
      {message && <Notice>{message}</Notice>}
      {radius && <Radius radius={radius} />}
    </section>
  );
}
