import { useSession } from '../auth/session-context';
import { DataTable } from '../components/data-table';
import { ErrorAlert } from '../components/error-alert';
import { formatValue } from '../components/format';
import { KeyValueTable } from '../components/settings-view';
import { useLoad } from '../components/use-load';
import type { Row } from '../api/types';

interface Stats {
  running: boolean;
  queries_total: number;
  simulated?: boolean;
  cache: { entries: number; max_entries: number; hits: number; misses: number; hit_rate_pct: number; evictions: number };
  rpz: { rules: number; zones: number; hits: number; per_zone: Row[] };
}

/** The resolver's counters (`GET /dns/stats`): cache use and what the blocklists caught, per zone. */
export function DnsStats() {
  const { api } = useSession();
  const stats = useLoad(() => api.get<Stats>('/dns/stats'), 'dns-stats');
  const data = stats.data;
  return (
    <section class="panel" aria-label="Resolver statistics">
      <header class="panel-head">
        <h2>Resolver statistics</h2>
      </header>
      <ErrorAlert message={stats.error} />
      {!stats.error && (
        <KeyValueTable
          caption="Resolver statistics"
          loading={stats.loading && !data}
          entries={
            data
              ? [
                  ['Running', formatValue(data.running)],
                  ['Queries', formatValue(data.queries_total)],
                  ['Cache entries', `${data.cache.entries} of ${data.cache.max_entries}`],
                  ['Cache hit rate', `${data.cache.hit_rate_pct} % (${data.cache.hits} hits, ${data.cache.misses} misses)`],
                  ['Cache evictions', formatValue(data.cache.evictions)],
                  ['Blocking rules', `${data.rpz.rules} in ${data.rpz.zones} zone(s), ${data.rpz.hits} hits`],
                ]
              : []
          }
        />
      )}
      {data && data.rpz.per_zone.length > 0 && (
        <DataTable
          caption="Blocking zones"
          rows={data.rpz.per_zone}
          columns={[
            { key: 'name', label: 'Zone' },
            { key: 'rules', label: 'Rules' },
            { key: 'hits', label: 'Hits' },
          ]}
        />
      )}
    </section>
  );
}
