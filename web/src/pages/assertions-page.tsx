import { useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import type { Row } from '../api/types';
import { ActionButton } from '../components/action-button';
import { CollectionSection } from '../components/collection-section';
import { DataTable } from '../components/data-table';
import { ErrorAlert, Notice } from '../components/error-alert';
import { Page } from '../components/page';
import type { FieldSpec } from '../components/record-form';

interface AssertionResult { holds: boolean; outcome: string; expect: string; decided_by?: string | null; detail?: string | null; against?: string; checked_at?: string }
interface Judged { id: string; name: string; kind: string; result: AssertionResult }

const ASSERTION_FIELDS: readonly FieldSpec[] = [
  { name: 'name', label: 'Name', kind: 'text', required: true },
  { name: 'description', label: 'Description', kind: 'text' },
  { name: 'kind', label: 'Kind', kind: 'select', options: ['transit', 'probe'], hint: 'transit: a packet through the rules; probe: something the box itself does' },
  { name: 'expect', label: 'Expect', kind: 'select', options: ['pass', 'block'] },
  { name: 'interface', label: 'Entering on', kind: 'text', hint: 'transit: an interface or a role (lan, wan)' },
  { name: 'egress_interface', label: 'Leaving by', kind: 'text', hint: 'transit, optional: default the interface whose network holds the destination' },
  { name: 'protocol', label: 'Protocol', kind: 'select', options: ['', 'tcp', 'udp', 'icmp', 'icmp6'] },
  { name: 'source', label: 'Source', kind: 'text', hint: 'transit: an address, a CIDR or <alias>' },
  { name: 'destination', label: 'Destination', kind: 'text', hint: 'transit: an address, a CIDR or <alias>' },
  { name: 'port', label: 'Port', kind: 'number' },
  { name: 'probe', label: 'Probe', kind: 'select', options: ['', 'tcp', 'icmp', 'dns', 'http'] },
  { name: 'target', label: 'Target', kind: 'text', hint: 'probe: an address or a host name (http: also a URL)' },
  { name: 'query', label: 'Query', kind: 'text', hint: 'dns: the name asked; http: the status wanted' },
  { name: 'source_interface', label: 'From', kind: 'text', hint: 'probe: an interface, a role or one of the box\'s addresses' },
  { name: 'timeout_ms', label: 'Timeout (ms)', kind: 'number' },
  { name: 'interval_seconds', label: 'Every (seconds)', kind: 'number', hint: 'probe: how often the continuous check runs it' },
];

/** What an assertion states, in one line. */
function statement(row: Row): string {
  const port = row.port ? `:${String(row.port)}` : '';
  if (row.kind === 'probe') return `${String(row.probe)} ${String(row.target)}${port}${row.source_interface ? ` from ${String(row.source_interface)}` : ''}`;
  return `${String(row.protocol)} ${String(row.source)} → ${String(row.destination)}${port} in on ${String(row.interface)}`;
}

/** A result as one line: holds or not, what was found, and what decided it. */
function resultText(result: AssertionResult | undefined): string {
  if (!result) return 'not checked yet';
  const decided = result.decided_by ? `; ${result.decided_by}` : '';
  return `${result.holds ? 'holds' : 'BROKEN'} (${result.outcome}, expects ${result.expect}${decided})`;
}

/** Assertions (docs/assertions.md): what must stay true of the network, judged before, after and between changes. */
export function AssertionsPage() {
  const { api, can } = useSession();
  const [generation, setGeneration] = useState(0);
  const [judged, setJudged] = useState<Judged[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const broken = judged?.filter((entry) => !entry.result.holds).length ?? 0;
  return (
    <Page title="Assertions" help="What must stay true of the network: a change that would break an enabled transit assertion is refused before it is applied; probes run on their schedule.">
      <CollectionSection
        key={generation}
        title="Assertions"
        itemName="assertion"
        path="/assertions"
        writePermission="rules:write"
        deletable
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'kind', label: 'Kind' },
          { key: 'statement', label: 'States', render: statement },
          { key: 'expect', label: 'Expect' },
          { key: 'enabled', label: 'Enabled' },
          { key: 'last_result', label: 'Last result', render: (row) => resultText(row.last_result as AssertionResult | undefined) },
        ]}
        createFields={ASSERTION_FIELDS}
        editFields={[...ASSERTION_FIELDS, { name: 'enabled', label: 'Enabled', kind: 'checkbox' }]}
        empty="No assertion yet."
      />
      {can('rules:write') && (
        <section class="panel" aria-label="Check now">
          <header class="panel-head">
            <h2>Check now</h2>
          </header>
          <div class="actions">
            <ActionButton
              tone="primary"
              run={async () => setJudged(await api.post<Judged[]>('/assertions/run'))}
              onDone={() => setGeneration((value) => value + 1)}
              onError={setError}
            >
              Check every assertion now
            </ActionButton>
          </div>
          <ErrorAlert message={error} />
          {judged && <Notice>{`${judged.length} judged, ${broken} broken.`}</Notice>}
          {judged && (
            <DataTable
              caption="Results of the check"
              rows={judged}
              rowKey={(row) => row.id}
              empty="No enabled assertion."
              columns={[
                { key: 'name', label: 'Name' },
                { key: 'kind', label: 'Kind' },
                { key: 'result', label: 'Result', render: (row) => resultText(row.result) },
                { key: 'detail', label: 'Detail', render: (row) => row.result.detail ?? '' },
              ]}
            />
          )}
        </section>
      )}
    </Page>
  );
}
