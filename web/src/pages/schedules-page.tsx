import { CollectionSection } from '../components/collection-section';
import { Page } from '../components/page';
import type { FieldSpec } from '../components/record-form';

const SCHEDULE_FIELDS: readonly FieldSpec[] = [
  { name: 'name', label: 'Name', kind: 'text', required: true },
  { name: 'time_ranges', label: 'Time ranges', kind: 'text', hint: 'e.g. 08:00-18:00, 20:00-22:00' },
  { name: 'days_of_week', label: 'Days of the week', kind: 'text', hint: 'e.g. mon,tue,wed,thu,fri; left empty on creation: every day' },
  { name: 'description', label: 'Description', kind: 'text' },
];

export function SchedulesPage() {
  return (
    <Page title="Schedules" help="Time windows a rule can be limited to.">
      <CollectionSection
        title="Schedules"
        itemName="schedule"
        path="/schedules"
        writePermission="rules:write"
        deletable
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'time_ranges', label: 'Time ranges' },
          { key: 'days_of_week', label: 'Days' },
          { key: 'description', label: 'Description' },
          { key: 'enabled', label: 'Enabled' },
        ]}
        createFields={SCHEDULE_FIELDS}
        editFields={[...SCHEDULE_FIELDS, { name: 'enabled', label: 'Enabled', kind: 'checkbox' }]}
      />
    </Page>
  );
}
