/**
 * Bulwark's own scheduler for what stays on the box (no cron, no logrotate): every tick it copies new audit
 * rows into logs/audit.log, and on the service clock it runs a rotation pass with the /settings/log-rotation
 * policy and prunes IDS alerts per /settings/ids-alerts. Production ticks once a second; tests move the
 * injected clock and call tick().
 */
import type { AppContext } from '../../context.js';
import { onDaemonEvent } from '../../platform/daemon-events.js';
import { ServiceState } from '../common/service-state.js';
import { daemonLogEntry } from './daemon-log-files.js';
import { pruneAlerts, type AlertRetention } from '../ids/alert-retention.js';
import { rotate, type RotationConfig } from './log-rotation.js';
import type { LocalLogs } from './local-logs.js';

/** How often (service clock) a rotation pass and an alert prune run. */
export const ROTATION_CHECK_MS = 60_000;
export const ALERT_PRUNE_MS = 60_000;
const TICK_MS = 1_000;
const AUDIT_BATCH = 1000;
const AUDIT_BATCHES_PER_TICK = 5;
const CURSOR = 'local_logs.audit_cursor';

const ROTATION_DEFAULTS: RotationConfig = { max_size_mb: 5, keep: 7, compression: 'gzip' };
const ALERT_DEFAULTS: AlertRetention = { max_mb: 64, max_age_secs: 86_400 };

interface AuditRow {
  id: number;
  at: string;
  category: string;
  action: string;
  actor: string | null;
  client_ip: string | null;
  outcome: string;
  details: string | null;
}

export class LogMaintenance {
  private readonly state: ServiceState;
  private nextRotation = 0;
  private nextPrune = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** Rotations run one after another (the scheduler's pass, PUT /settings/log-rotation, POST …/rotate). */
  private rotating: Promise<unknown> = Promise.resolve();
  private unsubscribe: (() => void) | undefined;
  /** What the last passes did, for GET /settings/log-rotation. */
  lastRotation: { at: string; rotated: string[] } | null = null;
  lastPrune: { at: string; expired: number; over_size: number } | null = null;

  constructor(private readonly context: AppContext, readonly logs: LocalLogs) {
    this.state = new ServiceState(context.db, context.clock);
    // The first passes are one interval after start on the service clock (a test's clock moves only when told).
    const now = context.clock.now();
    this.nextRotation = now + ROTATION_CHECK_MS;
    this.nextPrune = now + ALERT_PRUNE_MS;
    // From creation, not from start: areas that start earlier (the dashboard opens ulogd) report daemons' first lines before this area starts.
    this.followDaemonLines();
  }

  /** Each program's lines go to its own file as they are reported (child or adopted alike: the bus, not the process). */
  private followDaemonLines(): void {
    this.unsubscribe ??= onDaemonEvent((event) => {
      if (event.kind !== 'log') return;
      const entry = daemonLogEntry(event.daemon, event.line);
      if (entry) this.logs.write(entry.service, entry.line);
    });
  }

  start(): void {
    this.followDaemonLines();
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** One pass (never two at once): audit rows, then whatever is due on the service clock. */
  tick(): Promise<void> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async pass(): Promise<void> {
    const now = this.context.clock.now();
    this.logs.reopenMoved();
    try {
      this.copyAudit();
    } catch (error) {
      this.context.log.warn({ err: error }, 'audit rows could not be copied to the local audit log');
    }
    if (now >= this.nextPrune) {
      this.nextPrune = now + ALERT_PRUNE_MS;
      const retention = { ...ALERT_DEFAULTS, ...(this.context.store.getSingleton('settings_ids_alerts') ?? {}) } as AlertRetention;
      try {
        this.lastPrune = { at: new Date(now).toISOString(), ...pruneAlerts(this.context.db, retention, now) };
      } catch (error) {
        this.context.log.warn({ err: error }, 'IDS alerts could not be pruned');
      }
    }
    if (now >= this.nextRotation) {
      this.nextRotation = now + ROTATION_CHECK_MS;
      try {
        const rotated = await this.rotate();
        this.lastRotation = { at: new Date(now).toISOString(), rotated };
      } catch (error) {
        this.context.log.warn({ err: error }, 'log rotation failed');
      }
    }
  }

  /** A rotation pass with the stored policy, or the rotation of one managed log (`path`: its path or service). */
  rotate(path?: string): Promise<string[]> {
    const policy = { ...ROTATION_DEFAULTS, ...(this.context.store.getSingleton('settings_log_rotation') ?? {}) } as RotationConfig;
    const run = this.rotating.then(() => rotate(this.context.config.dataDir, policy, path));
    this.rotating = run.catch(() => undefined);
    return run;
  }

  /** Audit rows written since the last copy (the cursor survives restarts); skipped, not kept, while local logs are off. */
  private copyAudit(): void {
    let cursor = this.state.get(CURSOR, { id: 0 }).id;
    const page = this.context.db.prepare('SELECT id, at, category, action, actor, client_ip, outcome, details FROM audit_log WHERE id > ? ORDER BY id LIMIT ?');
    // At most AUDIT_BATCHES_PER_TICK pages a tick: a long history (an upgrade) is copied over several ticks, never in one long stall.
    for (let batch = 0; batch < AUDIT_BATCHES_PER_TICK; batch++) {
      const rows = page.all(cursor, AUDIT_BATCH) as AuditRow[];
      if (rows.length === 0) break;
      if (this.logs.enabled()) {
        for (const row of rows) {
          const { id: _id, details, ...fields } = row;
          this.logs.write('audit', JSON.stringify({ ...fields, details: parseDetails(details) }));
        }
      }
      cursor = rows[rows.length - 1].id;
      this.state.set(CURSOR, { id: cursor });
      if (rows.length < AUDIT_BATCH) break;
    }
  }
}

function parseDetails(details: string | null): unknown {
  if (details === null) return null;
  try {
    return JSON.parse(details);
  } catch {
    return details;
  }
}
