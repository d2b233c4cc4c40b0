import { Type } from 'typebox';
import { isIP } from 'node:net';
import { rmSync } from 'node:fs';
import { describeRefusal, logRefusal } from '../common/checker-refusal.js';
import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import { route, type RouteSpec } from '../../http/route.js';
import { collectionRoutes } from '../../http/collection-routes.js';
import { singletonRoutes } from '../../http/singleton-routes.js';
import { badRequest, conflict } from '../../core/errors.js';
import { IdParams } from '../../model/schema-helpers.js';
import { entryNotCoveredByAdmin, notCoveredMessage } from '../../net/admin-allow-list.js';
import type { ConfigData } from '../../store/config-store.js';
import type { PendingFlags } from '../../live/pending-flags.js';
import type { DnsFeed } from '../../live/feeds.js';
import { LogLines, LogQuery, tailLines } from '../common/log-query.js';
import { Message } from '../common/schemas.js';
import { hostSettingsOf } from '../common/host-settings.js';
import { hostPath } from '../../platform/host-files.js';
import {
  ApplyReport, BlocklistSchedule, BlocklistSource, BlocklistStatusFields, DnsStats, DomainOverride, Enabled, HostOverride,
  PatternEntry, RefreshOutcome, ResolverAcl, ResolverConfig, ResolverStatus, SystemDns,
} from './schema.js';
import { ServiceState } from '../common/service-state.js';
import { BlocklistDownloads } from './blocklist-downloads.js';
import { BlocklistFilter } from './blocklist-filter.js';
import { DNS_KINDS } from './kinds.js';
import { DnsResolver, readHostNameservers } from './resolver.js';
import { ScheduledBlocklistRefresh } from './scheduled-refresh.js';
import {
  validateAcl, validateBlocklistSource, validateCron, validateDomainOverride, validateHost, validatePattern, validateResolver,
} from './validation.js';

const TAGS = ['dns'];
const READ = 'dns:read' as const;
const WRITE = 'dns:write' as const;

/** The DNS area: the resolver (Unbound), blocklists and the appliance's own nameservers; it owns GET /pending's `dns` flag. */
export function createDnsArea(context: AppContext, needs: { pendingFlags: PendingFlags; dnsEvents: DnsFeed }): Area {
  const { models } = context;
  const host = hostSettingsOf(context);
  let dns: DnsResolver;
  let lists: BlocklistDownloads;
  const schedule = models.singleton({
    kind: DNS_KINDS.schedule, noun: 'blocklist schedule', writeAccess: WRITE, schema: BlocklistSchedule,
    validate: (data) => {
      validateCron(String(data.cron));
      (data.allow_private_sources as string[]).forEach((entry, index) => {
        const [address, prefix] = entry.split('/');
        if (!isIP(address) || (prefix !== undefined && !/^\d{1,3}$/.test(prefix))) throw badRequest(`body.allow_private_sources.${index} must be an IP address or CIDR`);
      });
      // Kept for compatibility, it may only repeat the administrator's list (settings:write), never widen it.
      const uncovered = entryNotCoveredByAdmin(data.allow_private_sources as string[], context.store);
      if (uncovered !== null) throw badRequest(notCoveredMessage('body.allow_private_sources', uncovered));
    },
  });
  // Names and domain patterns are compared regardless of case: DNS names are, and a person reads the names.
  const blocklists = models.collection({
    kind: DNS_KINDS.blocklist, noun: 'blocklist source', writeAccess: WRITE, schema: BlocklistSource,
    unique: [{ field: 'name', caseInsensitive: true }],
    validate: (data, ctx) => validateBlocklistSource(data, context.store, ctx.existing),
    beforeRemove: (source) => {
      if (source.data.built_in) throw conflict(`blocklist source "${String(source.data.name)}" is built in: disable it instead of deleting it`);
    },
    computed: { schema: BlocklistStatusFields, add: (object) => lists.blocklistStatus(object.id) },
  });
  const whitelist = models.collection({
    kind: DNS_KINDS.whitelist, noun: 'whitelist entry', writeAccess: WRITE, schema: PatternEntry,
    unique: [{ field: 'pattern', caseInsensitive: true }], validate: validatePattern,
  });
  const customblocks = models.collection({
    kind: DNS_KINDS.customblock, noun: 'custom block', writeAccess: WRITE, schema: PatternEntry,
    unique: [{ field: 'pattern', caseInsensitive: true }], validate: validatePattern,
  });
  const hosts = models.collection({ kind: DNS_KINDS.host, noun: 'host override', writeAccess: WRITE, schema: HostOverride, validate: validateHost });
  const domains = models.collection({
    kind: DNS_KINDS.domain, noun: 'domain override', writeAccess: WRITE, schema: DomainOverride,
    unique: [{ field: 'domain', caseInsensitive: true }], validate: validateDomainOverride,
  });
  const acls = models.collection({ kind: DNS_KINDS.acl, noun: 'resolver ACL entry', writeAccess: WRITE, schema: ResolverAcl, unique: ['network'], validate: validateAcl });
  const resolver = models.singleton({ kind: DNS_KINDS.resolver, noun: 'DNS resolver configuration', writeAccess: WRITE, schema: ResolverConfig, validate: validateResolver });
  const systemDns = models.singleton({
    kind: DNS_KINDS.system, noun: 'system nameservers', writeAccess: WRITE,
    schema: Type.Object({ servers: Type.Array(Type.String({ maxLength: 45, pattern: '^[0-9A-Fa-f.:]+$' }), { default: [], maxItems: 16 }), configured: Type.Boolean({ default: false }) }),
    // resolv.conf takes IP addresses only; the hook runs on every write path (PUT, import, restore).
    validate: (data) => {
      (data.servers as string[]).forEach((server, index) => {
        if (!isIP(server)) throw badRequest(`body.servers.${index} must be an IP address`);
      });
    },
  });
  const serviceState = new ServiceState(context.db, context.clock);
  const filter = new BlocklistFilter(context, { blocklists, whitelist, customblocks, hosts, domains }, serviceState, () => lists.schedule().enabled);
  dns = new DnsResolver(context, { hosts, domains, acls, resolver }, serviceState, filter, { flags: needs.pendingFlags, events: needs.dnsEvents });
  lists = new BlocklistDownloads(context, { blocklists, schedule }, serviceState, filter, () => dns.reloadIfRunning());
  const refreshSchedule = new ScheduledBlocklistRefresh(context, lists);
  needs.pendingFlags.register('dns', () => dns.resolverState().pending);
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
  // Every change of what Unbound renders makes the resolver pending; list changes also reach a running Unbound
  // at once (after a whole-configuration replace the coordinator applies instead).
  models.onChanged([blocklists, whitelist, customblocks], async (change) => {
    lists.forgetRemovedBlocklists();
    dns.markPending();
    if (change.cause === 'write') await dns.reloadIfRunning();
  });
  models.onChanged([resolver, hosts, domains, acls], () => dns.markPending());

  const action = (path: string, summary: string, mode: 'apply' | 'start' | 'stop' | 'restart'): RouteSpec => ({
    method: 'POST', path, access: WRITE, tags: TAGS, summary, schema: { response: { 200: ApplyReport } },
    handler: () => dns.apply(mode),
  });
  const access = { read: READ, write: WRITE };

  const routes: RouteSpec[] = [
    {
      method: 'GET', conditional: 'read', path: '/api/v1/dns', access: READ, tags: TAGS, summary: "The appliance's own nameservers (resolv.conf)",
      schema: { response: { 200: Type.Object({ servers: Type.Array(Type.String()), source: Type.String(), file: Type.String() }) } },
      handler: () => {
        const stored = systemDns.read();
        return stored.configured
          ? { servers: stored.servers, source: 'configured', file: context.platform.simulated ? `${context.config.dataDir}/dns/resolv.conf` : hostPath(context.config.hostRoot, '/etc/resolv.conf') }
          : { servers: readHostNameservers(), source: 'host', file: '/etc/resolv.conf' };
      },
    },
    route({
      method: 'PUT', path: '/api/v1/dns', access: WRITE, tags: TAGS,
      summary: "Set the appliance's own nameservers: /etc/resolv.conf (or systemd-resolved) on linux/freebsd; 409 with the reason, nothing changed, when the host refuses it",
      schema: { body: SystemDns, response: { 200: Message } },
      handler: (request) => host.exclusive(async () => {
        const previous = systemDns.read();
        const next = systemDns.preview({ servers: request.body.servers, configured: true });
        const domain = String(context.store.getSingleton('system_general')?.domain ?? '');
        const search = domain ? [domain] : [];
        const applied = await host.host.resolvers({ servers: next.servers as string[], search });
        // (Resolvers Bulwark never managed cannot be put back: that file was the host's own.)
        await host.keep(systemDns.kind, () => systemDns.write({ servers: next.servers, configured: true }), async () => {
          if (previous.configured === true) await host.host.resolvers({ servers: previous.servers as string[], search });
        });
        // The specification's sentence when the host's resolvers changed; where they did not, the answer says so.
        return { message: applied.warning ? `DNS configuration updated: rendered into ${applied.files.join(', ')} (${applied.warning})` : 'DNS configuration updated' };
      }),
    }),
    {
      method: 'GET', path: '/api/v1/dns/stats', access: READ, tags: TAGS, summary: 'Resolver cache and blocklist counters',
      schema: { response: { 200: DnsStats } },
      handler: () => context.platform.daemons.dnsStats(),
    },
    // GET /dns/stream is served by the dashboard area (src/areas/dashboard): one SSE writer for every stream.
    ...collectionRoutes(blocklists, { path: '/api/v1/dns/blocklists', access, tags: TAGS }),
    route({
      method: 'POST', path: '/api/v1/dns/blocklists/{id}/refresh', access: WRITE, tags: TAGS, summary: 'Download and parse one blocklist source now',
      schema: { params: IdParams(), response: { 200: RefreshOutcome } },
      handler: (request) => lists.refresh(request.params.id),
    }),
    {
      method: 'POST', path: '/api/v1/dns/blocklists/refresh-all', access: WRITE, tags: TAGS, summary: 'Refresh every enabled source',
      schema: { response: { 200: Type.Array(RefreshOutcome) } },
      handler: () => lists.refreshAll(),
    },
    {
      method: 'GET', conditional: 'read', path: '/api/v1/dns/blocklists/enabled', access: READ, tags: TAGS, summary: 'Is blocklisting on',
      schema: { response: { 200: Enabled } },
      handler: () => ({ enabled: Boolean(schedule.read().enabled) }),
    },
    route({
      method: 'PUT', path: '/api/v1/dns/blocklists/enabled', access: WRITE, tags: TAGS, summary: 'Turn blocklisting on (refreshes every enabled source) or off',
      schema: { body: Enabled, response: { 200: Type.Object({ enabled: Type.Boolean(), refreshed: Type.Array(RefreshOutcome) }) } },
      handler: (request) => lists.setEnabled(request.body.enabled),
    }),
    ...singletonRoutes(schedule, { path: '/api/v1/dns/blocklists/schedule', access, tags: TAGS }),
    ...collectionRoutes(whitelist, { path: '/api/v1/dns/whitelist', access, tags: TAGS, operations: ['list', 'create', 'delete'] }),
    ...collectionRoutes(customblocks, { path: '/api/v1/dns/customblocks', access, tags: TAGS, operations: ['list', 'create', 'delete'] }),
    ...singletonRoutes(resolver, { path: '/api/v1/dns/resolver/config', access, tags: TAGS }),
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
    route({
      method: 'GET', path: '/api/v1/dns/resolver/logs', access: READ, tags: TAGS, summary: 'Tail of the resolver log, newest first',
      schema: { querystring: LogQuery, response: { 200: LogLines } },
      handler: async (request) => tailLines(await context.platform.daemons.logs('unbound'), request.query),
    }),
    ...collectionRoutes(hosts, { path: '/api/v1/dns/resolver/hosts', access, tags: TAGS, operations: ['list', 'create', 'read', 'update', 'delete'] }),
    ...collectionRoutes(domains, { path: '/api/v1/dns/resolver/domains', access, tags: TAGS, operations: ['list', 'create', 'read', 'update', 'delete'] }),
    ...collectionRoutes(acls, { path: '/api/v1/dns/resolver/acls', access, tags: TAGS, operations: ['list', 'create', 'read', 'update', 'delete'] }),
  ];
  return {
    name: 'dns',
    routes,
    start: () => {
      lists.seedBuiltIns();
      dns.start();
      refreshSchedule.start();
    },
    stop: () => {
      refreshSchedule.stop();
      dns.stop();
    },
  };
}

export type { ConfigData };
