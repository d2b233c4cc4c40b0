import { useEffect, useState } from 'preact/hooks';
import { apiUrl } from '../api/client';
import { useSession } from '../auth/session-context';
import type { Row } from '../api/types';
import { DataTable } from '../components/data-table';
import { ErrorAlert, Notice } from '../components/error-alert';

/** What `GET /dns/stream` sends: the resolver's counters once a second, and each query and block it logs. */
type DnsEvent =
  | { type: 'stats'; data: { running: boolean; queries_total: number; rpz: { hits: number } } }
  | { type: 'query' | 'block'; data: { ts: number; client: string | null; qname: string; qtype: string; action?: string; zone?: string } };

const KEPT = 200;

/**
 * The resolver live (`GET /dns/stream`, Server-Sent Events with a single-use ticket): its counters, and the queries
 * and blocks it logs, newest first. Pause closes the stream; Resume opens a new one.
 */
export function DnsLive() {
  const { api, can } = useSession();
  const [paused, setPaused] = useState(false);
  const [events, setEvents] = useState<Row[]>([]);
  const [stats, setStats] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const allowed = can('dns:read');
  useEffect(() => {
    if (!allowed || paused) return undefined;
    let source: EventSource | null = null;
    let closed = false;
    void api.ticket().then(
      (ticket) => {
        if (closed) return;
        source = new EventSource(apiUrl('/dns/stream', { ticket }));
        source.onmessage = (message: MessageEvent<string>) => {
          const event = JSON.parse(message.data) as DnsEvent;
          setError(null);
          if (event.type === 'stats') {
            const { running, queries_total, rpz } = event.data;
            setStats(`${running ? 'Resolver running' : 'Resolver not running'}: ${queries_total} queries answered, ${rpz.hits} blocked since it started.`);
          } else {
            setEvents((kept) => [{ kind: event.type, ...event.data }, ...kept].slice(0, KEPT));
          }
        };
        source.onerror = () => setError('The live DNS stream was interrupted; it reconnects by itself.');
      },
      (failure: unknown) => setError(failure instanceof Error ? failure.message : String(failure)),
    );
    return () => {
      closed = true;
      source?.close();
    };
  }, [allowed, paused]);
  if (!allowed) return <Notice>The live DNS queries need the permission dns:read.</Notice>;
  return (
    <section class="panel" aria-label="DNS queries, live">
      <header class="panel-head">
        <h2>DNS queries, live</h2>
        <button type="button" class="secondary" aria-label={paused ? 'Resume the DNS queries' : 'Pause the DNS queries'} onClick={() => setPaused(!paused)}>
          {paused ? 'Resume' : 'Pause'}
        </button>
      </header>
      <ErrorAlert message={error} />
      <p role="status">{paused ? 'Paused.' : (stats ?? 'Connecting…')}</p>
      <DataTable
        caption="DNS queries and blocks, newest first"
        rows={events}
        columns={[
          { key: 'ts', label: 'Time', render: (row) => new Date(Number(row.ts)).toLocaleTimeString() },
          { key: 'kind', label: 'Event' },
          { key: 'client', label: 'Client' },
          { key: 'qname', label: 'Name' },
          { key: 'qtype', label: 'Type' },
          { key: 'zone', label: 'Blocked by' },
        ]}
        empty="No query logged yet (queries are logged when the resolver's query log is on)."
      />
    </section>
  );
}
