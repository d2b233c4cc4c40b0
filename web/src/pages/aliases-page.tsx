import { CollectionSection } from '../components/collection-section';
import { Page } from '../components/page';
import type { FieldSpec } from '../components/record-form';

const ALIAS_FIELDS: readonly FieldSpec[] = [
  { name: 'name', label: 'Name', kind: 'text', required: true },
  { name: 'alias_type', label: 'Type', kind: 'select', options: ['host', 'network', 'port', 'url_table'] },
  { name: 'entries', label: 'Entries', kind: 'lines', hint: 'one address, network, port or URL per line' },
  { name: 'description', label: 'Description', kind: 'text' },
];

export function AliasesPage() {
  return (
    <Page title="Aliases" help="Named sets of addresses, networks or ports; rules refer to them as <name>.">
      <CollectionSection
        title="Aliases"
        itemName="alias"
        path="/aliases"
        writePermission="aliases:write"
        deletable
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'alias_type', label: 'Type' },
          { key: 'entries', label: 'Entries' },
          { key: 'description', label: 'Description' },
          { key: 'enabled', label: 'Enabled' },
        ]}
        createFields={ALIAS_FIELDS}
        editFields={[...ALIAS_FIELDS, { name: 'enabled', label: 'Enabled', kind: 'checkbox' }]}
      />
    </Page>
  );
}
