import type { FastifyBaseLogger } from 'fastify';
import type { Pool } from './database.js';

/** How often a controller process tells PostgreSQL it is alive (one statement per process, whatever its agents). */
export const HEARTBEAT_MS = 2000;
/** A process whose heartbeat is older than this is dead: the connections it held are not counted. */
export const PROCESS_STALE_SECONDS = 10;

/** SQL: the process named by `column` (an `appliances.connected_to`) beat recently, so its sockets are live. */
export const liveProcessSql = (column: string) =>
  `EXISTS (SELECT 1 FROM controller_processes p WHERE p.id = ${column} AND p.heartbeat_at > now() - make_interval(secs => ${PROCESS_STALE_SECONDS}))`;

/**
 * This controller process in `controller_processes`, with a heartbeat. An appliance's connection row names the
 * process holding its socket; the views count it connected only while that process beats, so a process that dies
 * (SIGKILL, a lost host) stops counting within seconds, without any other process touching its rows. The times are
 * PostgreSQL's own `now()`, so the processes' clocks do not matter.
 */
export class ProcessRegistry {
  private timer: NodeJS.Timeout | null = null;
  private beating: Promise<void> | null = null;

  constructor(
    private readonly pool: Pool,
    readonly id: string,
    private readonly log: FastifyBaseLogger,
  ) {}

  /**
   * Registers this process, then clears what dead processes left: their rows, and the connection rows naming a
   * process that does not beat (never a live one's). Before the listener accepts anything.
   */
  async start(): Promise<void> {
    await this.beat();
    await this.pool.query(`DELETE FROM controller_processes WHERE heartbeat_at <= now() - make_interval(secs => ${PROCESS_STALE_SECONDS})`);
    await this.pool.query(`UPDATE appliances a SET connected_to = NULL WHERE a.connected_to IS NOT NULL AND NOT ${liveProcessSql('a.connected_to')}`);
    this.timer = setInterval(() => {
      this.beating ??= this.beat().catch((error: unknown) => this.log.warn({ err: error }, 'fleet: the heartbeat could not be written'))
        .finally(() => (this.beating = null));
    }, HEARTBEAT_MS);
  }

  /** An upsert: a process another one took for dead (stalled past the limit) comes back with its next beat. */
  private async beat(): Promise<void> {
    await this.pool.query('INSERT INTO controller_processes (id) VALUES ($1) ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()', [this.id]);
  }

  /** A graceful stop: this process's connections stop counting at once. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    // A beat in flight would put the row back after the delete.
    await this.beating;
    await this.pool.query('DELETE FROM controller_processes WHERE id = $1', [this.id]).catch(() => undefined);
  }
}
