import { useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import { CollectionSection } from '../components/collection-section';
import { SearchForm } from '../components/search-form';
import { Page } from '../components/page';
import type { FieldSpec } from '../components/record-form';
import { KeyValueTable, fieldLabel } from '../components/settings-view';
import { formatValue } from '../components/format';

const RULE_FIELDS: readonly FieldSpec[] = [
  { name: 'country_code', label: 'Country', kind: 'text', required: true, hint: 'ISO code, 2 letters, e.g. NL' },
  { name: 'action', label: 'Action', kind: 'select', options: ['block', 'allow'] },
  { name: 'label', label: 'Label', kind: 'text' },
];

/** Which country an address is in, by the appliance's own database (GET /geoip/lookup/{ip}). */
function Lookup() {
  const { api } = useSession();
  const [answer, setAnswer] = useState<Record<string, unknown> | null>(null);
  const look = async (address: string) => {
    setAnswer(null);
    setAnswer(await api.get<Record<string, unknown>>(`/geoip/lookup/${encodeURIComponent(address.trim())}`));
  };
  return (
    <section class="panel" aria-label="Address lookup">
      <h2>Address lookup</h2>
      <SearchForm label="IP address" name="ip" button="Look up" required search={look}>
        {answer && <KeyValueTable caption="Lookup result" entries={Object.entries(answer).map(([key, value]) => [fieldLabel(key), formatValue(value)])} />}
      </SearchForm>
    </section>
  );
}

export function GeoipPage() {
  return (
    <Page title="Geo-IP" help="Allow or block whole countries by their address ranges, and look up where an address is.">
      <CollectionSection
        title="Country rules"
        itemName="country rule"
        path="/geoip"
        writePermission="geoip:write"
        readEach={false}
        deletable
        describe={(row) => `the rule for ${String(row.country)}`}
        columns={[
          { key: 'country', label: 'Country' },
          { key: 'action', label: 'Action' },
          { key: 'label', label: 'Label' },
          { key: 'status', label: 'Status' },
          { key: 'cidr_count', label: 'Ranges' },
        ]}
        createFields={RULE_FIELDS}
        editFields={[
          { name: 'action', label: 'Action', kind: 'select', options: ['block', 'allow'] },
          { name: 'label', label: 'Label', kind: 'text' },
          { name: 'status', label: 'Status', kind: 'select', options: ['active', 'disabled'] },
        ]}
      />
      <Lookup />
    </Page>
  );
}
