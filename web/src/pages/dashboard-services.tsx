import { useSession } from '../auth/session-context';
import { DataTable } from '../components/data-table';
import { useLoad } from '../components/use-load';

interface ServiceRow {
  name: string;
  state: string;
  detail: string;
}

/** What each service's status endpoint needs, and how its answer reads. */
const SERVICES: { name: string; path: string; permission: string; detail(status: Record<string, unknown>): string }[] = [
  { name: 'DNS resolver', path: '/dns/resolver/status', permission: 'dns:read', detail: (s) => `${String(s.queries_total ?? 0)} queries` },
  { name: 'DHCP server', path: '/dhcp/status', permission: 'dhcp:read', detail: (s) => `${String(s.active_leases ?? 0)} active leases` },
  { name: 'Time service', path: '/time/status', permission: 'settings:read', detail: (s) => (s.synchronized ? 'synchronised' : 'not synchronised') },
  { name: 'IDS / IPS', path: '/ids/stats', permission: 'ids:read', detail: (s) => `mode ${String(s.mode ?? '—')}` },
];

/** Services and whether they run; read once per visit (their state changes rarely, unlike the traffic). */
export function ServicesPanel({ packetFilterRunning }: { packetFilterRunning: boolean | null }) {
  const { api, can } = useSession();
  const services = useLoad(
    () =>
      Promise.all(
        SERVICES.filter((service) => can(service.permission)).map(async (service): Promise<ServiceRow> => {
          try {
            const status = await api.get<Record<string, unknown>>(service.path);
            return { name: service.name, state: status.running ? 'running' : 'stopped', detail: service.detail(status) };
          } catch (error) {
            return { name: service.name, state: 'unknown', detail: error instanceof Error ? error.message : String(error) };
          }
        }),
      ),
    'services',
  );
  const rows: ServiceRow[] = [
    { name: 'Packet filter', state: packetFilterRunning === null ? '—' : packetFilterRunning ? 'running' : 'stopped', detail: 'live' },
    ...(services.data ?? []),
  ];
  return (
    <section class="panel" aria-label="Services">
      <h2>Services</h2>
      <DataTable
        caption="Services"
        rows={rows}
        rowKey={(row) => row.name}
        columns={[
          { key: 'name', label: 'Service' },
          { key: 'state', label: 'State', render: (row) => <span class={`state ${row.state}`}>{row.state}</span> },
          { key: 'detail', label: 'Detail' },
        ]}
      />
    </section>
  );
}
