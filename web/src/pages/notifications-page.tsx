import { CollectionSection } from '../components/collection-section';
import { messageOf } from '../components/error-alert';
import { Page } from '../components/page';
import type { FieldSpec } from '../components/record-form';
import { useSession } from '../auth/session-context';
import { EventRouting } from './event-routing';

const WEBHOOK_FIELDS: readonly FieldSpec[] = [
  { name: 'name', label: 'Name', kind: 'text', required: true },
  { name: 'url', label: 'URL', kind: 'text', required: true, hint: 'http or https; plain http only to an address allowed below' },
  { name: 'secret', label: 'Secret', kind: 'password', setFlag: 'has_secret', hint: 'signs each body (X-Bulwark-Signature); never shown again' },
  { name: 'allowed_addresses', label: 'Allowed addresses', kind: 'lines', hint: 'private or loopback addresses this webhook may reach, one per line' },
];

/** Notifications (issue 34): the webhooks events are posted to, and which event reaches which channel. */
export function NotificationsPage() {
  const { api, can } = useSession();
  return (
    <Page title="Notifications" help="Where events are announced: e-mail (the SMTP settings under System) and signed webhooks, and which event reaches which of them.">
      <CollectionSection
        title="Webhooks"
        itemName="webhook"
        path="/notify/webhooks"
        writePermission="settings:write"
        deletable
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'url', label: 'URL' },
          { key: 'has_secret', label: 'Secret', render: (row) => (row.has_secret ? 'set' : 'not set') },
          { key: 'allowed_addresses', label: 'Allowed addresses' },
          { key: 'enabled', label: 'Enabled' },
        ]}
        createFields={WEBHOOK_FIELDS}
        editFields={[...WEBHOOK_FIELDS, { name: 'enabled', label: 'Enabled', kind: 'checkbox' }]}
        rowActions={
          can('settings:write')
            ? (row, _reload, report) => (
            <button
              type="button"
              class="secondary"
              aria-label={`Test ${String(row.name)}`}
              onClick={async () => {
                report.error(null);
                try {
                  const answer = await api.post<{ message: string }>(`/notify/webhooks/${encodeURIComponent(String(row.id))}/test`);
                  report.done(`${String(row.name)}: ${answer.message}`);
                } catch (failure) {
                  report.error(`${String(row.name)}: ${messageOf(failure)}`);
                }
              }}
            >
              Test
            </button>
          )
            : undefined
        }
      />
      <EventRouting />
    </Page>
  );
}
