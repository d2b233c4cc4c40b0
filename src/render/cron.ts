import { renderRefused } from './refusal.js';

/** The commands a Bulwark crontab line may run, with the words each accepts as arguments. */
const COMMANDS: Record<string, ReadonlySet<string>> = {
  'bulwark-maintenance': new Set(['check', 'install', 'reboot', 'appliance']),
};

export interface CronEntry {
  minute: number;
  hour: number;
  dayOfWeek: number;
  user: 'root';
  command: string;
  args: string[];
}

const inRange = (value: number, max: number) => Number.isInteger(value) && value >= 0 && value <= max;

/**
 * The one writer of crontab lines: every time field is a single number in its range (never `*`, a list or a
 * step written from a value), the user is fixed and the command and its arguments come from an allow-list.
 */
export function cronLine(entry: CronEntry, field: string): string {
  if (!inRange(entry.minute, 59) || !inRange(entry.hour, 23) || !inRange(entry.dayOfWeek, 6)) {
    throw renderRefused('crontab', field, 'time fields must be numbers in range');
  }
  const allowed = COMMANDS[entry.command];
  if (!allowed || entry.args.some((arg) => !allowed.has(arg))) throw renderRefused('crontab', field, 'not an allowed command');
  return `${entry.minute} ${entry.hour} * * ${entry.dayOfWeek} ${entry.user} ${[entry.command, ...entry.args].join(' ')}`;
}
