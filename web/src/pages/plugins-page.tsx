import { useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import type { Row } from '../api/types';
import { ActionButton } from '../components/action-button';
import { CollectionSection } from '../components/collection-section';
import { ErrorAlert } from '../components/error-alert';
import { Page } from '../components/page';
import { PluginFindings } from './plugin-findings';

/** The rows of a `{ plugins: [...] }` answer, keyed by name (plugins have no id). */
const pluginRows = (data: unknown): Row[] =>
  ((data as { plugins?: Row[] } | null)?.plugins ?? []).map((plugin) => ({ ...plugin, id: String(plugin.name ?? (plugin.manifest as Row | undefined)?.name ?? plugin.path) }));

export function PluginsPage() {
  const { api, can } = useSession();
  const [error, setError] = useState<string | null>(null);
  return (
    <Page title="Plugins" help="Built-in and installed plugins: what each hooks into, and whether it runs.">
      <ErrorAlert message={error} />
      <CollectionSection
        title="Installed plugins"
        itemName="plugin"
        path="/plugins"
        pick={pluginRows}
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'version', label: 'Version' },
          { key: 'description', label: 'Description' },
          { key: 'hooks', label: 'Hooks' },
          { key: 'state', label: 'State' },
          { key: 'built_in', label: 'Built in' },
        ]}
        rowActions={(row, reload) =>
          can('plugins:write') ? (
            <ActionButton run={() => api.post('/plugins/toggle', { name: row.name, enabled: row.state !== 'running' })} onDone={reload} onError={setError}>
              {row.state === 'running' ? `Disable ${String(row.name)}` : `Enable ${String(row.name)}`}
            </ActionButton>
          ) : null
        }
      />
      <PluginFindings />
      <CollectionSection
        title="Plugin directory"
        itemName="manifest"
        path="/plugins/discover"
        pick={pluginRows}
        empty="No plugin manifests in the plugin directory."
        columns={[
          { key: 'name', label: 'Name', render: (row) => String((row.manifest as Row | undefined)?.name ?? '') },
          { key: 'path', label: 'Manifest' },
          { key: 'installed', label: 'Installed' },
        ]}
      />
    </Page>
  );
}
