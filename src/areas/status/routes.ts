import { Type } from 'typebox';
import type { Area } from '../area.js';
import type { RouteSpec } from '../../http/route.js';
import type { AppContext } from '../../context.js';
import { BUILD } from '../../core/build-info.js';
import type { DriftReport } from '../packet-filter/kernel-sync.js';
import { servicesStatus, ServicesStatusProperties } from './services-status.js';
import { BootStatus, readBootStatus } from './boot.js';
import { BlockedLogSchema } from './blocked-log-schema.js';
import { runtimeAccessProblems, runtimeRoot } from '../../platform/daemon-runtime.js';

const PlatformInfo = Type.Object({
  name: Type.String(),
  simulated: Type.Boolean(),
  description: Type.String(),
});

const About = Type.Object({
  name: Type.String(),
  version: Type.String(),
  git_commit: Type.Union([Type.String(), Type.Null()]),
  built_at: Type.Union([Type.String(), Type.Null()]),
  node_version: Type.String(),
  platform: PlatformInfo,
  simulated: Type.Boolean(),
  features: Type.Record(Type.String(), Type.Boolean()),
});

const Status = Type.Object({
  status: Type.String({ description: '`ok` or `degraded`' }),
  simulated: Type.Boolean(),
  platform: PlatformInfo,
  uptime_seconds: Type.Integer(),
  store: Type.Object({ ok: Type.Boolean(), configuration_objects: Type.Integer(), error: Type.Optional(Type.String()) }),
  pf_running: Type.Boolean(),
  pf_backend: Type.String(),
  pf_states: Type.Integer(),
  pf_rules: Type.Integer(),
  packets_in: Type.Integer(),
  packets_out: Type.Integer(),
  bytes_in: Type.Integer(),
  bytes_out: Type.Integer(),
  pf_error: Type.Optional(Type.String()),
  pf_problems: Type.Optional(Type.Array(Type.String(), { description: 'what stops the loaded ruleset from taking effect (e.g. a pf.conf anchor hook missing), each with the fix' })),
  drift: Type.Boolean({ description: 'the kernel no longer holds the ruleset last applied (changed by hand, flushed); POST /reload repairs it' }),
  drift_check: Type.Object({
    checked_at: Type.Union([Type.String(), Type.Null()], { description: 'when the kernel was last read back; null before the first apply' }),
    interval_seconds: Type.Integer({ description: 'seconds between periodic checks (--drift-check-interval); 0: off' }),
    differences: Type.Array(Type.String(), { description: 'what differs from the applied ruleset, per chain, set, anchor part' }),
    error: Type.Optional(Type.String({ description: 'why the last read-back failed' })),
  }),
  traffic: Type.Object({
    source: Type.String({ description: 'where connections and counters come from; says "simulated" on the simulated platform' }),
    simulated: Type.Boolean(),
    blocked_log: BlockedLogSchema,
  }),
  ...ServicesStatusProperties,
  boot: BootStatus,
  runtime_access: Type.Object({
    root: Type.Union([Type.String(), Type.Null()], { description: "the daemons' runtime tree (--runtime-dir); null on the simulated platform" }),
    problems: Type.Array(Type.Object({
      daemon: Type.String(),
      user: Type.String(),
      path: Type.String({ description: 'the folder the daemon user cannot use' }),
      missing: Type.String({ description: '`execute (traverse)`, `read` or `write`' }),
    }), { description: 'what a daemon user cannot reach in its runtime tree (its applies answer 409 until fixed); empty when all is well' }),
  }, { description: 'Bulwark extension: whether each daemon user can reach its files' }),
});

const TRAFFIC_SOURCES = { simulated: 'simulated: deterministic synthetic traffic model', linux: 'conntrack, /sys/class/net, nftables counters', freebsd: 'pfctl states and labels, netstat' } as const;

function platformInfo(context: AppContext) {
  const { platform } = context;
  return { name: platform.name, simulated: platform.simulated, description: platform.description };
}

function storeHealth(context: AppContext) {
  try {
    const row = context.db.prepare('SELECT count(*) AS n FROM config_objects').get() as { n: number };
    return { ok: true, configuration_objects: row.n };
  } catch (error) {
    return { ok: false, configuration_objects: 0, error: (error as Error).message };
  }
}

/** What the status area reads from others: whether the kernel still holds the applied ruleset. */
export interface StatusNeeds {
  drift: () => DriftReport;
}

/** An app without the packet-filter area (test and bench apps) applies no ruleset: nothing to drift from. */
const NO_RULESET: StatusNeeds = { drift: () => ({ drift: false, drift_check: { checked_at: null, interval_seconds: 0, differences: [] } }) };

export function createStatusArea(context: AppContext, needs: StatusNeeds = NO_RULESET): Area {
  return { name: 'status', routes: routes(context, needs) };
}

function routes(context: AppContext, needs: StatusNeeds): RouteSpec[] {
  return [
  {
    method: 'GET', path: '/api/v1/about', access: 'dashboard:view', tags: ['status'],
    summary: 'Build, version, platform and feature flags',
    schema: { response: { 200: About } },
    handler: () => ({
      name: 'Bulwark',
      version: BUILD.version,
      git_commit: BUILD.gitCommit,
      built_at: BUILD.builtAt,
      node_version: process.version,
      platform: platformInfo(context),
      simulated: context.platform.simulated,
      features: { simulated_platform: context.platform.simulated, packet_filter: true, dashboard_websocket: true, sse_streams: true, metrics_store: true, simulated_traffic: context.platform.traffic.simulated },
    }),
  },
  {
    method: 'GET', path: '/api/v1/status', access: 'dashboard:view', tags: ['status'],
    summary: 'Health snapshot of the service, the store and the packet filter',
    schema: { response: { 200: Status } },
    handler: async () => {
      const pf = await context.platform.packetFilter.status();
      const store = storeHealth(context);
      const drift = needs.drift();
      const access = runtimeAccessProblems(context.config, context.platform.simulated);
      return {
        status: store.ok && pf.running && !pf.problems?.length && !drift.drift && access.length === 0 ? 'ok' : 'degraded',
        simulated: context.platform.simulated,
        platform: platformInfo(context),
        uptime_seconds: Math.floor((context.clock.now() - context.startedAt) / 1000),
        store,
        pf_running: pf.running,
        pf_backend: pf.backend,
        pf_states: pf.states,
        pf_rules: pf.rules,
        packets_in: pf.packets_in,
        packets_out: pf.packets_out,
        bytes_in: pf.bytes_in,
        bytes_out: pf.bytes_out,
        ...(pf.error ? { pf_error: pf.error } : {}),
        ...(pf.problems?.length ? { pf_problems: pf.problems } : {}),
        ...drift,
        traffic: {
          source: TRAFFIC_SOURCES[context.platform.name],
          simulated: context.platform.traffic.simulated,
          blocked_log: context.platform.traffic.blockedLogStatus(),
        },
        ...(await servicesStatus(context)),
        boot: readBootStatus(context),
        runtime_access: {
          root: context.platform.simulated ? null : runtimeRoot(context.config),
          problems: access,
        },
      };
    },
  },
  ];
}
