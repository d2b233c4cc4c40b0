/**
 * Bringing back, at start, what the appliance ran before the API process stopped: each service registers how it
 * is restored from its last *applied* state (the installed configuration file of a daemon, the applied ruleset),
 * never from pending edits. A daemon an earlier API process left running is adopted untouched when it runs that
 * state (src/platform/supervised-process.ts), replaced when it runs another, and started when it is gone.
 *
 * The restores run in the background once the app is ready, one at a time in registration order, so the API
 * answers while they run: /status lists each service with what it is waiting for, and `ready` is true only when
 * every enabled service is back.
 */
import type { FastifyBaseLogger } from 'fastify';

export interface RestorableService {
  /** The service's name in /status (`dns`, `dhcp`, `time`, `wireguard`, `reverse-proxy` …). */
  name: string;
  /** The daemon or mechanism behind it (`unbound`, `kea-dhcp4`, `wireguard-go`, `nftables`). */
  daemon: string;
  /** Whether the applied state has it running (an explicitly disabled service is not enabled). */
  enabled(): boolean;
  /** Whether it serves now (its process answers, its interfaces exist). */
  running(): Promise<boolean>;
  /** The configuration version its applied state was rendered from; null when that was not a recorded version. */
  appliedVersion(): number | null;
  /** Adopts, re-applies or starts it from its applied state; throws why it could not. Absent: its area's start hook did it. */
  restore?(): Promise<void>;
}

export type RestorePhase = 'waiting' | 'restoring' | 'done' | 'failed';

export interface ServiceReport {
  name: string;
  daemon: string;
  enabled: boolean;
  running: boolean;
  applied_version: number | null;
  /** While starting: what the service waits for (its turn, its daemon to answer); null once it is back or not enabled. */
  waiting_for: string | null;
  /** Why the restore failed; null otherwise. */
  error: string | null;
}

interface Entry {
  service: RestorableService;
  phase: RestorePhase;
  error: string | null;
}

export class ServiceRestore {
  private readonly entries: Entry[] = [];
  private started = false;
  private stopped = false;
  private finished: Promise<void> = Promise.resolve();

  constructor(private readonly log: FastifyBaseLogger) {}

  register(service: RestorableService): void {
    if (this.entries.some((entry) => entry.service.name === service.name)) throw new Error(`service ${service.name} registered twice`);
    this.entries.push({ service, phase: 'waiting', error: null });
  }

  /** Starts the restores in the background (once); `done` resolves when all have run. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.finished = this.run();
  }

  /** Resolves once every restore has run (tests and the shutdown wait for it). */
  done(): Promise<void> {
    return this.finished;
  }

  /** The API is stopping: restores not yet begun are skipped (what runs keeps running). */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.finished;
  }

  private async run(): Promise<void> {
    for (const entry of this.entries) {
      if (this.stopped) return;
      const { service } = entry;
      if (!service.enabled() || !service.restore) {
        entry.phase = 'done';
        continue;
      }
      entry.phase = 'restoring';
      const started = performance.now();
      try {
        await service.restore();
        entry.phase = 'done';
        this.log.info({ service: service.name, ms: Math.round(performance.now() - started) }, 'service restored from its applied state');
      } catch (error) {
        entry.phase = 'failed';
        entry.error = (error as Error).message;
        this.log.error({ service: service.name, err: entry.error }, 'service could not be restored from its applied state');
      }
    }
  }

  async report(): Promise<{ ready: boolean; services: ServiceReport[] }> {
    const services = await Promise.all(this.entries.map(async ({ service, phase, error }): Promise<ServiceReport> => {
      const enabled = service.enabled();
      const running = await service.running().catch(() => false);
      return {
        name: service.name,
        daemon: service.daemon,
        enabled,
        running,
        applied_version: service.appliedVersion(),
        waiting_for: !enabled || running ? null : waitingFor(phase, service.daemon),
        error: phase === 'failed' ? error : null,
      };
    }));
    const restoring = this.entries.some((entry) => entry.phase === 'waiting' || entry.phase === 'restoring');
    return { ready: this.started && !restoring && services.every((s) => !s.enabled || s.running), services };
  }
}

function waitingFor(phase: RestorePhase, daemon: string): string {
  switch (phase) {
    case 'waiting':
      return 'its turn: the services before it are being restored';
    case 'restoring':
      return `${daemon} to answer on its control channel`;
    case 'failed':
      return `${daemon}: its restore failed (see error); POST /api/v1/reload applies again`;
    case 'done':
      return `${daemon} to run again (it stopped after it was restored; the supervisor restarts it)`;
  }
}
