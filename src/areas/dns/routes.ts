import { Type } from 'typebox';
import { isIP } from 'node:net';
import { rmSync } from 'node:fs';
import { describeRefusal, logRefusal } from '../common/checker-refusal.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import type { RouteSpec } from '../../http/route.js';
import { Singleton } from '../../http/singleton.js';
import { badRequest, conflict } from '../../core/errors.js';
import { IdParams } from '../../http/schema-helpers.js';
import type { ConfigData } from '../../store/config-store.js';
import { afterWrite } from '../common/after-write.js';
import { registerPendingFlag } from '../../live/pending-flags.js';
import { LogLines, LogQuery, tailLines } from '../common/log-query.js';
import { Message } from '../common/schemas.js';
import { writeDataFile } from '../common/data-files.js';
import { resolvConfLine } from '../../render/resolv-conf.js';
import {
  ApplyReport, BlocklistSchedule, BlocklistSource, BlocklistStatusFields, DnsStats, DomainOverride, Enabled, HostOverride,
  PatternEntry, RefreshOutcome, ResolverAcl, ResolverConfig, ResolverStatus, SystemDns,
} from './schema.js';
import {
  DNS_KINDS, DnsService, readHostNameservers, validateAcl, validateBlocklistSource, validateCron, validateDomainOverride,
  validateHost, validatePattern, validateResolver,
} from './service.js';

const TAGS = ['dns'];
const READ = 'dns:read' as const;
const WRITE = 'dns:write' as const;

/** One service per app (tests run several apps in one process). */
const services = new Map<AppContext, DnsService>();

function routes(context: AppContext): RouteSpec[] {
  const { collections, store, sealer } = context;
  let dns: DnsService;
  const schedule = new Singleton({
    kind: DNS_KINDS.schedule, path: '/api/v1/dns/blocklists/schedule', schema: BlocklistSchedule, access: { read: READ, write: WRITE },
    validate: (data) => {
      validateCron(String(data.cron));
      (data.allow_private_sources as string[]).forEach((entry, index) => {
        const [address, prefix] = entry.split('/');
        if (!isIP(address) || (prefix !== undefined && !/^\d{1,3}$/.test(prefix))) throw badRequest(`body.allow_private_sources.${index} must be an IP address or CIDR`);
      });
    },
    tags: TAGS, noun: 'blocklist schedule',
  }, store, sealer);
  const blocklists = collections.declare({
    kind: DNS_KINDS.blocklist, path: '/api/v1/dns/blocklists', schema: BlocklistSource, access: { read: READ, write: WRITE },
    unique: ['name'],
    validate: (data, ctx) => validateBlocklistSource(data, (schedule.read().allow_private_sources as string[]) ?? [], ctx.existing),
    computed: { schema: BlocklistStatusFields, add: (object) => dns.blocklistStatus(object.id) },
    tags: TAGS, noun: 'blocklist source',
  });
  const whitelist = collections.declare({
    kind: DNS_KINDS.whitelist, path: '/api/v1/dns/whitelist', schema: PatternEntry, access: { read: READ, write: WRITE },
    operations: ['list', 'create', 'delete'], unique: ['pattern'], validate: validatePattern, tags: TAGS, noun: 'whitelist entry',
  });
  const customblocks = collections.declare({
    kind: DNS_KINDS.customblock, path: '/api/v1/dns/customblocks', schema: PatternEntry, access: { read: READ, write: WRITE },
    operations: ['list', 'create', 'delete'], unique: ['pattern'], validate: validatePattern, tags: TAGS, noun: 'custom block',
  });
  const hosts = collections.declare({
    kind: DNS_KINDS.host, path: '/api/v1/dns/resolver/hosts', schema: HostOverride, access: { read: READ, write: WRITE },
    operations: ['list', 'create', 'update', 'delete'], validate: validateHost, tags: TAGS, noun: 'host override',
  });
  const domains = collections.declare({
    kind: DNS_KINDS.domain, path: '/api/v1/dns/resolver/domains', schema: DomainOverride, access: { read: READ, write: WRITE },
    operations: ['list', 'create', 'update', 'delete'], unique: ['domain'], validate: validateDomainOverride, tags: TAGS, noun: 'domain override',
  });
  const acls = collections.declare({
    kind: DNS_KINDS.acl, path: '/api/v1/dns/resolver/acls', schema: ResolverAcl, access: { read: READ, write: WRITE },
    operations: ['list', 'create', 'update', 'delete'], unique: ['network'], validate: validateAcl, tags: TAGS, noun: 'resolver ACL entry',
  });
  const resolver = new Singleton({
    kind: DNS_KINDS.resolver, path: '/api/v1/dns/resolver/config', schema: ResolverConfig, access: { read: READ, write: WRITE },
    validate: validateResolver, tags: TAGS, noun: 'DNS resolver configuration',
  }, store, sealer);
  const systemDns = new Singleton({
    kind: DNS_KINDS.system, path: '/api/v1/dns',
    schema: Type.Object({ servers: Type.Array(Type.String({ maxLength: 45, pattern: '^[0-9A-Fa-f.:]+$' }), { default: [], maxItems: 16 }), configured: Type.Boolean({ default: false }) }),
    access: { read: READ, write: WRITE }, tags: TAGS, noun: 'system nameservers',
    // resolv.conf takes IP addresses only; the hook runs on every write path (PUT, import, restore).
    validate: (data) => {
      (data.servers as string[]).forEach((server, index) => {
        if (!isIP(server)) throw badRequest(`body.servers.${index} must be an IP address`);
      });
    },
  }, store, sealer);
  dns = new DnsService(context, { blocklists, whitelist, customblocks, hosts, domains, acls, resolver, schedule });
  services.set(context, dns);
  // GET /pending (packet-filter area) reports this flag as `dns`.
  registerPendingFlag(context, 'dns', () => dns.resolverState().pending);
  // The resolver is one applier of the whole configuration (POST /reload, restore, import, commit-confirm).
  context.apply.register('dns', async () => {
    // Nothing to do for a resolver that is off and not running (the check hook still validates it).
    if (resolver.read().enabled || dns.active) await dns.apply('apply');
    else dns.clearPending();
  }, {
    check: async () => {
      const candidate = await dns.render();
      try {
        const result = await context.platform.daemons.check('unbound', candidate.file);
        if (!result.ok) {
          logRefusal(context, 'unbound', result);
          return { errors: [describeRefusal('Unbound', result, candidate.text)] };
        }
        return { errors: [], info: [result.checked ? `the Unbound configuration passes ${result.checker}` : result.output] };
      } finally {
        rmSync(candidate.file, { force: true });
      }
    },
  });

  const pending = () => dns.markPending();
  const pendingAndReload = async () => {
    dns.markPending();
    await dns.reloadIfRunning();
  };
  const action = (path: string, summary: string, mode: 'apply' | 'start' | 'stop' | 'restart'): RouteSpec => ({
    method: 'POST', path, access: WRITE, tags: TAGS, summary, schema: { response: { 200: ApplyReport } },
    handler: () => dns.apply(mode),
  });
  const withBlocklistCleanup = blocklists.routes().map((route): RouteSpec => {
    if (route.method !== 'DELETE') return route;
    return {
      ...route,
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        const { id } = request.params as { id: string };
        const source = blocklists.find(id);
        if (source.data.built_in) throw conflict(`blocklist source "${String(source.data.name)}" is built in: disable it instead of deleting it`);
        await route.handler(request, reply);
        dns.forgetBlocklist(id);
        dns.markPending();
        await dns.reloadIfRunning();
        return reply;
      },
    };
  });

  return [
    {
      method: 'GET', path: '/api/v1/dns', access: READ, tags: TAGS, summary: "The appliance's own nameservers (resolv.conf)",
      schema: { response: { 200: Type.Object({ servers: Type.Array(Type.String()), source: Type.String(), file: Type.String() }) } },
      handler: () => {
        const stored = systemDns.read();
        return stored.configured
          ? { servers: stored.servers, source: 'configured', file: `${context.config.dataDir}/dns/resolv.conf` }
          : { servers: readHostNameservers(), source: 'host', file: '/etc/resolv.conf' };
      },
    },
    {
      method: 'PUT', path: '/api/v1/dns', access: WRITE, tags: TAGS, summary: "Set the appliance's own nameservers",
      schema: { body: SystemDns, response: { 200: Message } },
      handler: (request) => {
        const { servers } = request.body as { servers: string[] };
        const stored = systemDns.write({ servers, configured: true }).servers as string[];
        const lines = stored.map((server, index) => resolvConfLine('nameserver', [server], `dns.servers.${index}`));
        writeDataFile(context.config.dataDir, ['dns', 'resolv.conf'], `# Rendered by Bulwark\n${lines.join('\n')}\n`, 0o644);
        return { message: 'DNS configuration updated' };
      },
    },
    {
      method: 'GET', path: '/api/v1/dns/stats', access: READ, tags: TAGS, summary: 'Resolver cache and blocklist counters',
      schema: { response: { 200: DnsStats } },
      handler: () => context.platform.daemons.dnsStats(),
    },
    // GET /dns/stream is served by the dashboard area (src/areas/dashboard): one SSE writer for every stream.
    ...afterWrite(withBlocklistCleanup, pendingAndReload),
    {
      method: 'POST', path: '/api/v1/dns/blocklists/{id}/refresh', access: WRITE, tags: TAGS, summary: 'Download and parse one blocklist source now',
      schema: { params: IdParams(), response: { 200: RefreshOutcome } },
      handler: (request) => dns.refresh((request.params as { id: string }).id),
    },
    {
      method: 'POST', path: '/api/v1/dns/blocklists/refresh-all', access: WRITE, tags: TAGS, summary: 'Refresh every enabled source',
      schema: { response: { 200: Type.Array(RefreshOutcome) } },
      handler: () => dns.refreshAll(),
    },
    {
      method: 'GET', path: '/api/v1/dns/blocklists/enabled', access: READ, tags: TAGS, summary: 'Is blocklisting on',
      schema: { response: { 200: Enabled } },
      handler: () => ({ enabled: Boolean(schedule.read().enabled) }),
    },
    {
      method: 'PUT', path: '/api/v1/dns/blocklists/enabled', access: WRITE, tags: TAGS, summary: 'Turn blocklisting on (refreshes every enabled source) or off',
      schema: { body: Enabled, response: { 200: Type.Object({ enabled: Type.Boolean(), refreshed: Type.Array(RefreshOutcome) }) } },
      handler: (request) => dns.setEnabled((request.body as { enabled: boolean }).enabled),
    },
    ...schedule.routes(),
    ...afterWrite(whitelist.routes(), pendingAndReload),
    ...afterWrite(customblocks.routes(), pendingAndReload),
    ...afterWrite(resolver.routes(), pending),
    action('/api/v1/dns/resolver/apply', 'Render the Unbound configuration, check it, install it and (re)start or stop Unbound', 'apply'),
    {
      method: 'GET', path: '/api/v1/dns/resolver/status', access: READ, tags: TAGS, summary: 'Resolver state',
      schema: { response: { 200: ResolverStatus } },
      handler: async () => {
        const status = await context.platform.daemons.status('unbound');
        const stats = await context.platform.daemons.dnsStats();
        const state = dns.resolverState();
        const config = resolver.read();
        const { pid, config_version, config_sha256 } = await dns.report();
        return {
          running: status.running,
          pid,
          config_version,
          config_sha256,
          version: status.version,
          total_hosts: hosts.objects().length,
          total_domains: domains.objects().length,
          total_acls: acls.objects().length,
          cache_hits: stats.cache.hits,
          cache_misses: stats.cache.misses,
          queries_total: stats.queries_total,
          backend: state.backend ?? String(config.backend),
          listening_udp: status.running,
          listening_tcp: status.running,
          last_switch_at: state.last_switch_at,
          last_switch_result: state.last_switch_result,
          probe_enabled: Boolean(config.probe_enabled),
          pending: state.pending,
          simulated: status.simulated,
        };
      },
    },
    action('/api/v1/dns/resolver/start', 'Start Unbound with the current configuration', 'start'),
    action('/api/v1/dns/resolver/stop', 'Stop Unbound', 'stop'),
    action('/api/v1/dns/resolver/restart', 'Restart Unbound with the current configuration', 'restart'),
    {
      method: 'GET', path: '/api/v1/dns/resolver/logs', access: READ, tags: TAGS, summary: 'Tail of the resolver log, newest first',
      schema: { querystring: LogQuery, response: { 200: LogLines } },
      handler: async (request) => tailLines(await context.platform.daemons.logs('unbound'), request.query as { lines?: number; search?: string }),
    },
    ...afterWrite(hosts.routes(), pending),
    ...afterWrite(domains.routes(), pending),
    ...afterWrite(acls.routes(), pending),
  ];
}

export const dnsArea: Area = {
  name: 'dns',
  routes,
  start: (context) => {
    const dns = services.get(context);
    dns?.seedBuiltIns();
    dns?.start(() => context.db.open);
  },
  stop: () => {
    // Area.stop has no context: stop the services whose app has closed its database (or all at process end).
    for (const [context, dns] of services) {
      if (!context.db.open) {
        dns.stop();
        services.delete(context);
      }
    }
  },
};

export type { ConfigData };
