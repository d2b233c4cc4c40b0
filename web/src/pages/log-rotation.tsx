import { useSession } from '../auth/session-context';
import { ActionButton } from '../components/action-button';
import { CollectionSection, type RowActionReport } from '../components/collection-section';
import { NeedsPermission } from '../components/needs-permission';
import { formatBytes } from '../components/format';
import type { FieldSpec } from '../components/record-form';
import { SettingsSection } from '../components/settings-form';

type Record = { [key: string]: unknown };
const policy = (record: Record, name: string) => String((record.config as Record | undefined)?.[name] ?? '');

const ROTATION_FIELDS: readonly FieldSpec[] = [
  { name: 'max_size_mb', label: 'Rotate at (MB)', kind: 'number', read: (record) => policy(record, 'max_size_mb') },
  { name: 'keep', label: 'Rotated files kept', kind: 'number', read: (record) => policy(record, 'keep') },
  { name: 'compression', label: 'Compression', kind: 'select', options: ['gzip', 'none'], read: (record) => policy(record, 'compression') },
];

function RotateNow({ path, service, reload, report }: { path: string; service: string; reload(): void; report: RowActionReport }) {
  const { api, can } = useSession();
  if (!can('settings:write')) return null;
  const rotate = async () => {
    const answer = await api.post<{ message: string }>('/settings/log-rotation/rotate', { path });
    report.done(`${service}: ${answer.message}`);
  };
  return (
    <ActionButton run={rotate} onDone={reload} onError={report.error}>
      Rotate now
    </ActionButton>
  );
}

/** The rotation policy of the appliance's own logs, the logs it manages with their sizes, and "Rotate now" per log. */
export function LogRotation() {
  return (
    <NeedsPermission permission="settings:read" what="Log rotation">
      <SettingsSection title="Log rotation" path="/settings/log-rotation" writePermission="settings:write" fields={ROTATION_FIELDS} omit={['config', 'logs', 'limits']} />
      <CollectionSection
        title="Managed logs"
        path="/settings/log-rotation"
        pick={(data) => ((data as { logs?: Record[] }).logs ?? [])}
        columns={[
          { key: 'service', label: 'Service' },
          { key: 'size_bytes', label: 'Size', render: (row) => (row.size_bytes === null ? 'absent' : formatBytes(row.size_bytes as number)) },
          { key: 'rotated', label: 'Rotated files' },
          { key: 'total_bytes', label: 'With rotated', render: (row) => formatBytes(row.total_bytes as number) },
        ]}
        rowActions={(row, reload, report) => <RotateNow path={String(row.path)} service={String(row.service)} reload={reload} report={report} />}
      />
    </NeedsPermission>
  );
}
