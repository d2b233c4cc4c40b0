import pino, { type Logger, type LoggerOptions } from 'pino';
import type { EventHub } from './event-hub.js';
import { EVENT_TOPICS } from './events.js';

const RANK: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

/**
 * The API's logger: one pino instance writing to standard output at the configured level, and a second stream
 * (a tap) that announces every line on the hub as `app.log`, so syslog's application category sees the log
 * without a second logger. The logger's own level is the lower of the two (`floor`): the tap may want debug
 * lines that standard output does not print. No hub listener may log through this logger for a line it is
 * handed (syslog counts its failures instead), or a failure would feed itself.
 */
export function tappedLogger(options: LoggerOptions & { level: string }, events: EventHub): { logger: Logger; levelFor(floor: string | null): string } {
  const stdoutLevel = options.level;
  // Lines are parsed and announced only while someone asked for them (levelFor with a floor).
  let active = false;
  const tap = {
    write(line: string) {
      if (!active) return;
      try {
        const record = JSON.parse(line) as Record<string, unknown>;
        events.emit(EVENT_TOPICS.appLog, record);
      } catch {
        // not JSON: nothing to announce
      }
    },
  };
  const logger = pino(options, pino.multistream([
    { level: stdoutLevel as pino.Level, stream: pino.destination({ dest: 1, sync: true }) },
    { level: 'trace', stream: tap },
  ]));
  return {
    logger,
    /**
     * The level a logger must have for the tap to see lines at `floor` (null: standard output's level). Fastify
     * logs through a child of this instance, so the caller sets it there (children created later inherit it).
     */
    levelFor(floor) {
      active = floor !== null;
      return floor && RANK[floor] < RANK[stdoutLevel] ? floor : stdoutLevel;
    },
  };
}
