import { useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import type { Row } from '../api/types';
import { ActionButton } from '../components/action-button';
import { CollectionSection } from '../components/collection-section';
import { DataTable } from '../components/data-table';
import { ErrorAlert, Notice } from '../components/error-alert';
import { formatTime } from '../components/format';

interface Analysis {
  message: string;
  detections: Row[];
  connections_unavailable: string | null;
}

/**
 * AI analysis (`POST /ai/analyze`): the local detectors, and the provider's verdicts as suggestions on unreviewed
 * alerts; every detection and provider call is in the audit log below (`GET /ai/audit-log`).
 */
export function AiAnalysis() {
  const { api, can } = useSession();
  const [analysis, setAnalysis] = useState<Analysis | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [generation, setGeneration] = useState(0);
  return (
    <>
      {can('ids:write') && (
        <section class="panel" aria-label="AI analysis">
          <header class="panel-head">
            <h2>AI analysis</h2>
          </header>
          <p class="help">Runs the local detectors over the connections and alerts and, when a provider is set up on the System page, asks it about unreviewed high-severity alerts.</p>
          <div class="actions">
            <ActionButton tone="primary" run={async () => setAnalysis(await api.post<Analysis>('/ai/analyze'))} onDone={() => setGeneration((n) => n + 1)} onError={setError}>
              Analyse now
            </ActionButton>
          </div>
          <ErrorAlert message={error} />
          {analysis && <Notice>{analysis.message}{analysis.connections_unavailable ? ` (connections not read: ${analysis.connections_unavailable})` : ''}</Notice>}
          {analysis && (
            <DataTable
              caption="Detections"
              rows={analysis.detections}
              columns={[
                { key: 'threat_type', label: 'Threat' },
                { key: 'severity', label: 'Severity' },
                { key: 'source', label: 'Source' },
                { key: 'target', label: 'Target' },
                { key: 'evidence', label: 'Evidence' },
              ]}
              empty="Nothing detected."
            />
          )}
        </section>
      )}
      <CollectionSection
        key={generation}
        title="AI audit log"
        path="/ai/audit-log"
        pick={(data) => ((data as { entries?: Row[] }).entries ?? [])}
        empty="No analysis yet."
        columns={[
          { key: 'created_at', label: 'When', render: (row) => formatTime(row.created_at as string) },
          { key: 'kind', label: 'Kind' },
          { key: 'signature_msg', label: 'About' },
          { key: 'provider', label: 'Provider' },
          { key: 'classification', label: 'Verdict' },
          { key: 'actor', label: 'By' },
        ]}
      />
    </>
  );
}
