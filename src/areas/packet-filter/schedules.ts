/** The /schedules collection (wire-format.md §3.5): comma-joined time ranges and weekdays. */
import { Type } from 'typebox';
import { badRequest } from '../../core/errors.js';
import type { CollectionModel } from '../../model/collection-model.js';
import type { ModelRegistry } from '../../model/registry.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';
import { parseTimeRange } from '../../compile/firewall-model.js';
import { WEEKDAYS, type ScheduleData } from '../../compile/firewall-types.js';
import { OptionalNullable, ScheduleSchema } from '../../compile/firewall-schemas.js';
import { normaliseDescription } from './values.js';

export const SCHEDULE_KIND = 'schedule';
/** Schedule names are shown in rendered rulesets (as comments): a strict grammar, no quotes, escapes or line breaks. */
const SCHEDULE_NAME = /^[\p{L}\p{N}][\p{L}\p{N} _.,:+/()-]{0,63}$/u;

const StringOrList = Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 64 })]);

function requestSchema(create: boolean) {
  return Type.Object({
    name: Type.String({ minLength: 1, maxLength: 64 }),
    description: OptionalNullable(Type.String()),
    time_ranges: StringOrList,
    days_of_week: Type.Optional(StringOrList),
    enabled: Type.Optional(Type.Boolean()),
    id: Type.Optional(Type.String()),
    created_at: Type.Optional(Type.String()),
    updated_at: Type.Optional(Type.String()),
  }, { required: create ? ['name', 'time_ranges'] : [], additionalProperties: false });
}

/** The bodies POST /schedules and PUT /schedules/{id} take. */
export const ScheduleCreateBody = requestSchema(true);
export const ScheduleUpdateBody = requestSchema(false);

const joined = (value: string | string[]) => (Array.isArray(value) ? value : value.split(',')).map((s) => s.trim()).filter(Boolean);

export function toStoredSchedule(body: Record<string, unknown>, existing?: ConfigObject): ConfigData {
  const schedule: ScheduleData = existing
    ? { ...(existing.data as unknown as ScheduleData) }
    : { name: '', description: null, time_ranges: '', days_of_week: WEEKDAYS.join(','), enabled: true };
  if (body.name !== undefined) schedule.name = (body.name as string).trim();
  if (!SCHEDULE_NAME.test(schedule.name)) {
    throw badRequest('body.name must be 1-64 characters: letters, digits, spaces and _ . , : + / ( ) -, starting with a letter or digit');
  }
  if (body.description !== undefined) schedule.description = normaliseDescription(body.description as string | null);
  if (body.time_ranges !== undefined) {
    const ranges = joined(body.time_ranges as string | string[]);
    if (ranges.length === 0) throw badRequest('body.time_ranges must hold at least one range HH:MM-HH:MM');
    ranges.forEach((range, index) => {
      if (!parseTimeRange(range)) throw badRequest(`body.time_ranges.${index}: "${range}" is not a range HH:MM-HH:MM (hours 0-23, minutes 0-59)`);
      if (parseTimeRange(range)!.start === parseTimeRange(range)!.end) throw badRequest(`body.time_ranges.${index}: "${range}" is empty`);
    });
    schedule.time_ranges = ranges.join(',');
  }
  if (body.days_of_week !== undefined) {
    const days = joined(body.days_of_week as string | string[]).map((d) => d.toLowerCase());
    if (days.length === 0) throw badRequest('body.days_of_week must name at least one day');
    days.forEach((day, index) => {
      if (!WEEKDAYS.includes(day as never)) throw badRequest(`body.days_of_week.${index} must be one of: ${WEEKDAYS.join(', ')}`);
    });
    schedule.days_of_week = [...new Set(days)].join(',');
  }
  if (body.enabled !== undefined) schedule.enabled = body.enabled as boolean;
  return schedule as unknown as ConfigData;
}

/** The schedule model: names are unique regardless of case; create and update come from the request form (toStoredSchedule). */
export function declareSchedules(models: ModelRegistry): CollectionModel {
  return models.collection({
    kind: SCHEDULE_KIND, noun: 'schedule', writeAccess: 'rules:write',
    schema: ScheduleSchema,
    unique: [{ field: 'name', caseInsensitive: true }],
  });
}
