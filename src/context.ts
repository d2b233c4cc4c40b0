import type { FastifyBaseLogger } from 'fastify';
import type { StartupConfig } from './config.js';
import type { Clock } from './core/clock.js';
import type { Sealer } from './core/crypto.js';
import type { Db } from './store/database.js';
import type { ConfigStore } from './store/config-store.js';
import type { Platform } from './platform/platform.js';
import type { ModelRegistry } from './model/registry.js';
import type { IdentityService } from './auth/identity-service.js';
import type { ApplyCoordinator } from './core/apply.js';
import type { EventHub } from './core/event-hub.js';
import type { RequestMetrics } from './metrics/request-metrics.js';
import type { LocalLogs } from './areas/settings/local-logs.js';
import type { ServiceRestore } from './core/service-restore.js';

/** What every area's routes and services are built from. Created once in app.ts. */
export interface AppContext {
  config: StartupConfig;
  clock: Clock;
  db: Db;
  store: ConfigStore;
  sealer: Sealer;
  platform: Platform;
  /** Every declared kind of configuration object: writes, references, change hooks, import and restore go through it. */
  models: ModelRegistry;
  /** Accounts, sessions, keys, tickets and the auth audit. */
  identity: IdentityService;
  /** Runs every registered applier and records a configuration version on success (POST /reload, restore). */
  apply: ApplyCoordinator;
  /** In-process announcements (configuration applied, commit-confirm events) for live streams. */
  events: EventHub;
  /** API request counts and latencies (GET /metrics/prometheus). */
  requests: RequestMetrics;
  /** The local log files under logs/ (API, audit, daemons), off while syslog's disable_local is set. */
  localLogs: LocalLogs;
  /** The services brought back from their applied state at start (adopted, re-applied or started), and their readiness. */
  restore: ServiceRestore;
  log: FastifyBaseLogger;
  /** Lowers the logger's level to `level` for the hub's app.log (null: back to --log-level); standard output keeps --log-level. */
  logFloor(level: string | null): void;
  startedAt: number;
}
