import type { AppContext } from '../../context.js';
import { isoTime } from '../../core/clock.js';
import type { ConfigData } from '../../store/config-store.js';
import type { PowerRequest } from '../../platform/maintenance.js';
import { writeDataFile } from '../common/data-files.js';
import { ServiceState } from '../common/service-state.js';
import { ApplianceUpdates } from './appliance.js';
import { cronLine } from '../../render/cron.js';

const DAYS: Record<string, number> = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };

/** The maintenance window as a crontab line for the host's cron. */
export function renderMaintenanceCron(schedule: ConfigData): string {
  const steps = [schedule.auto_check === true && 'check', schedule.auto_install === true && 'install', schedule.auto_reboot === true && 'reboot', schedule.auto_update_appliance === true && 'appliance']
    .filter((step): step is string => typeof step === 'string');
  if (schedule.enabled !== true || steps.length === 0) return '# Rendered by Bulwark: maintenance window disabled\n';
  // Only a whole HH:MM is read; anything else becomes NaN and cronLine refuses it.
  const time = /^(\d{2}):(\d{2})$/.exec(String(schedule.time));
  const day = Object.hasOwn(DAYS, String(schedule.day_of_week)) ? DAYS[String(schedule.day_of_week)] : NaN;
  const line = cronLine({ minute: Number(time?.[2] ?? NaN), hour: Number(time?.[1] ?? NaN), dayOfWeek: day, user: 'root', command: 'bulwark-maintenance', args: steps }, 'updates.schedule');
  return `# Rendered by Bulwark: maintenance window\n${line}\n`;
}

/** OS/package updates through the platform, the maintenance window, power, and the history of it all. */
export class UpdatesService {
  readonly state: ServiceState;
  readonly appliance: ApplianceUpdates;
  private busy = { checking: false, installing: false };
  private readonly insertHistory;
  private readonly selectHistory;

  constructor(private readonly context: AppContext) {
    this.state = new ServiceState(context.db, context.clock);
    this.insertHistory = context.db.prepare('INSERT INTO update_history (action, details, status, created_at) VALUES (?, ?, ?, ?)');
    this.selectHistory = context.db.prepare('SELECT id, action, details, status, created_at FROM update_history ORDER BY id DESC LIMIT 50');
    this.appliance = new ApplianceUpdates(context, this.state, (action, details, status) => this.record(action, details, status));
  }

  stop(): void {
    this.appliance.stop();
  }

  record(action: string, details: string, status: string): void {
    this.insertHistory.run(action, details, status, isoTime(this.context.clock.now()));
  }

  history(): { id: number; action: string; details: string; status: string; created_at: string }[] {
    return this.selectHistory.all() as ReturnType<UpdatesService['history']>;
  }

  async status() {
    const os = await this.context.platform.maintenance.osStatus();
    return {
      os_version: os.os_version,
      last_check: this.state.get<{ last_check: string | null }>('updates', { last_check: null }).last_check,
      pending_os_updates: os.pending_os_updates,
      pending_pkg_count: os.pending_packages.length,
      pending_packages: os.pending_packages,
      needs_reboot: os.needs_reboot,
      checking: this.busy.checking,
      installing: this.busy.installing,
      simulated: this.context.platform.simulated,
    };
  }

  async check() {
    this.busy.checking = true;
    try {
      const result = await this.context.platform.maintenance.checkUpdates();
      this.state.set('updates', { last_check: isoTime(this.context.clock.now()) });
      this.record('check', result.message, 'completed');
      return { message: result.message, ...(await this.status()) };
    } finally {
      this.busy.checking = false;
    }
  }

  async install() {
    this.busy.installing = true;
    try {
      const result = await this.context.platform.maintenance.installUpdates();
      this.record('install', result.installed.length ? `${result.message}: ${result.installed.join(', ')}` : result.message, result.message.includes('failed') ? 'failed' : 'completed');
      return { message: result.message, installed: result.installed, needs_reboot: result.status.needs_reboot };
    } finally {
      this.busy.installing = false;
    }
  }

  applySchedule(schedule: ConfigData): void {
    writeDataFile(this.context.config.dataDir, ['updates', 'maintenance.cron'], renderMaintenanceCron(schedule), 0o644);
    this.record('schedule', schedule.enabled ? `${String(schedule.day_of_week)} ${String(schedule.time)}` : 'disabled', 'configured');
  }

  async power(action: PowerRequest['action'], delaySeconds: number, reason: string, historyAction: string) {
    const result = await this.context.platform.maintenance.power({ action, at: isoTime(this.context.clock.now()), delay_seconds: delaySeconds, reason });
    this.record(historyAction, result.message, result.executed ? 'scheduled' : this.context.platform.simulated ? 'recorded' : 'failed');
    return { message: result.message, executed: result.executed };
  }
}
