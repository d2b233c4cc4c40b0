import type { AppContext } from '../../context.js';
import { conflict } from '../../core/errors.js';
import { isoTime } from '../../core/clock.js';
import type { ConfigData } from '../../store/config-store.js';
import type { PowerRequest } from '../../platform/maintenance.js';
import { Cron } from 'croner';
import { ServiceState } from '../common/service-state.js';
import { ApplianceUpdates } from './appliance.js';

const DAYS: Record<string, number> = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };
const SCHEDULE_DEFAULTS = { enabled: false, day_of_week: 'sun', time: '03:00', auto_install: false, auto_reboot: false, auto_check: true, auto_update_appliance: false };

/** The maintenance window as a croner pattern (`minute hour * * weekday`), or null when it runs nothing. */
export function maintenancePattern(schedule: ConfigData): string | null {
  const steps = maintenanceSteps(schedule);
  if (schedule.enabled !== true || steps.length === 0) return null;
  const time = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(String(schedule.time));
  const day = Object.hasOwn(DAYS, String(schedule.day_of_week)) ? DAYS[String(schedule.day_of_week)] : null;
  if (!time || day === null) return null;
  return `${Number(time[2])} ${Number(time[1])} * * ${day}`;
}

export function maintenanceSteps(schedule: ConfigData): string[] {
  return [schedule.auto_check === true && 'check', schedule.auto_install === true && 'install', schedule.auto_update_appliance === true && 'appliance', schedule.auto_reboot === true && 'reboot']
    .filter((step): step is string => typeof step === 'string');
}

/** OS/package updates through the platform, the maintenance window, power, and the history of it all. */
export class UpdatesService {
  readonly state: ServiceState;
  readonly appliance: ApplianceUpdates;
  private busy = { checking: false, installing: false, maintaining: false };
  private window: Cron | null = null;
  private readonly insertHistory;
  private readonly selectHistory;

  constructor(private readonly context: AppContext) {
    this.state = new ServiceState(context.db, context.clock);
    this.insertHistory = context.db.prepare('INSERT INTO update_history (action, details, status, created_at) VALUES (?, ?, ?, ?)');
    this.selectHistory = context.db.prepare('SELECT id, action, details, status, created_at FROM update_history ORDER BY id DESC LIMIT 50');
    this.appliance = new ApplianceUpdates(context, this.state, (action, details, status) => this.record(action, details, status));
    this.armWindow(this.schedule());
  }

  stop(): void {
    this.appliance.stop();
    this.window?.stop();
  }

  private schedule(): ConfigData {
    return { ...SCHEDULE_DEFAULTS, ...(this.context.store.getSingleton('updates_schedule') ?? {}) };
  }

  /** Bulwark's own scheduler runs the maintenance window (no cron file, no outside command). */
  private armWindow(schedule: ConfigData): void {
    this.window?.stop();
    this.window = null;
    const pattern = maintenancePattern(schedule);
    if (!pattern) return;
    this.window = new Cron(pattern, { protect: true }, () => {
      void this.runMaintenance('schedule').catch(() => undefined);
    });
  }

  nextMaintenance(): string | null {
    const next = this.window?.nextRun();
    return next ? next.toISOString() : null;
  }

  /**
   * One maintenance window, as the schedule says (re-read now): check, install, the appliance's own update, and a
   * reboot only when one is required. Each step is recorded; a failing step ends the window.
   */
  async runMaintenance(trigger: 'schedule' | 'manual') {
    if (this.busy.maintaining) throw conflict('a maintenance window is already running');
    this.busy.maintaining = true;
    const schedule = this.schedule();
    const steps = maintenanceSteps(schedule);
    const done: string[] = [];
    try {
      for (const step of steps) {
        if (step === 'check') done.push(`check: ${(await this.check()).message}`);
        if (step === 'install') done.push(`install: ${(await this.install()).message}`);
        if (step === 'appliance') {
          const info = await this.appliance.check();
          done.push(info.update_available ? `appliance: ${(await this.appliance.install()).message}` : 'appliance: already the latest release');
        }
        if (step === 'reboot') {
          const needed = (await this.context.platform.maintenance.osStatus()).needs_reboot;
          done.push(needed ? `reboot: ${(await this.power('reboot', 60, 'maintenance window: a reboot is required', 'maintenance_reboot')).message}` : 'reboot: not required');
        }
      }
      this.record('maintenance', `${trigger}: ${done.join('; ') || 'nothing to do'}`, 'completed');
      return { message: done.join('; ') || 'nothing to do', steps };
    } catch (error) {
      this.record('maintenance', `${trigger}: ${[...done, (error as Error).message].join('; ')}`, 'failed');
      throw error;
    } finally {
      this.busy.maintaining = false;
    }
  }

  async preview() {
    const result = await this.context.platform.maintenance.previewUpdates();
    return { message: result.message, changes: result.changes };
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
      maintenance_next_run: this.nextMaintenance(),
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
    this.armWindow(schedule);
    this.record('schedule', schedule.enabled ? `${String(schedule.day_of_week)} ${String(schedule.time)}` : 'disabled', 'configured');
  }

  async power(action: PowerRequest['action'], delaySeconds: number, reason: string, historyAction: string) {
    const result = await this.context.platform.maintenance.power({ action, at: isoTime(this.context.clock.now()), delay_seconds: delaySeconds, reason });
    this.record(historyAction, result.message, result.executed ? 'scheduled' : this.context.platform.simulated ? 'recorded' : 'failed');
    return { message: result.message, executed: result.executed };
  }
}
