import type { AppContext } from '../context.js';
import { newLiveFeeds } from '../live/feeds.js';
import { PendingFlags } from '../live/pending-flags.js';
import type { Area } from './area.js';
import { createAuthArea } from './auth/routes.js';
import { createStatusArea } from './status/routes.js';
import { createPacketFilterArea } from './packet-filter/routes.js';
import { createSsoArea } from './sso/routes.js';
import { createVpnArea } from './vpn/routes.js';
import { createCaArea } from './ca/routes.js';
import { createIdsArea } from './ids/routes.js';
import { createGeoipArea } from './geoip/routes.js';
import { createReverseProxyArea } from './reverse-proxy/routes.js';
import { createMultiwanArea } from './multiwan/routes.js';
import { createAiArea } from './ai/routes.js';
import { createAcmeArea } from './acme/routes.js';
import { createDashboardArea } from './dashboard/routes.js';
import { createConfigArea } from './config/routes.js';
import { createDnsArea } from './dns/routes.js';
import { createDhcpArea } from './dhcp/routes.js';
import { createTimeArea } from './time/routes.js';
import { createNetworkingArea } from './networking/routes.js';
import { createSystemArea } from './system/routes.js';
import { createSettingsArea } from './settings/routes.js';
import { createEventsArea } from './events/routes.js';
import { createUpdatesArea } from './updates/routes.js';
import { createPluginsArea } from './plugins/routes.js';
import { createChangesArea } from './changes/routes.js';
import { createTlsArea } from './tls/routes.js';
import { createPrometheusArea } from './prometheus/routes.js';
import { createFlowExportArea } from './flow-export/routes.js';
import { createDiagnosticsArea } from './diagnostics/routes.js';
import { createAssertionsArea } from './assertions/routes.js';
import { createClusterArea } from './cluster/routes.js';
import { createClusterSyncArea } from './cluster/sync-routes.js';
import { createFleetAgentArea } from '../agent/area.js';

/**
 * Every API area of one app, in registration order (which is also the order appliers run in), each handed the
 * services it needs from the others. The config area comes last: its start-up commit-confirm rollback applies
 * through every other area's applier.
 */
export function createAreas(context: AppContext): Area[] {
  // Shared between producers and readers: the DNS area's pending flag is reported by GET /pending (packet
  // filter); IDS alerts reach the dashboard's frames.
  const pendingFlags = new PendingFlags(context.events);
  const feeds = newLiveFeeds();
  // Interface addresses, VLANs and static routes apply first: daemons and tunnels bind to what they put in place.
  const networking = createNetworkingArea(context);
  const ids = createIdsArea(context, { alerts: feeds.alerts });
  // Geo-IP rules are compiled into the packet filter's ruleset (compile/geoip-sets.ts).
  const geoip = createGeoipArea(context);
  // Built before the packet filter, which samples rule hit counters into its metrics store; registered in order.
  const dashboard = createDashboardArea(context, { feeds });
  const packetFilter = createPacketFilterArea(context, { pendingFlags, geoip: geoip.service, metrics: dashboard.service.engine });
  const ca = createCaArea(context);
  const reverseProxy = createReverseProxyArea(context);
  // The API's HTTPS: its certificate comes from the local CA, files, or an ACME certificate's local-tls-store target.
  const tls = createTlsArea(context, { ca: ca.service });
  const multiwan = createMultiwanArea(context);
  const assertions = createAssertionsArea(context, { packetFilter: packetFilter.service });
  // GET /pending lists the transit assertions the pending change would break; a new result re-sends the report.
  packetFilter.usePendingAssertions(() => assertions.service.pendingBroken().map(({ id, name, result }) => ({
    id, name, expect: result.expect, outcome: result.outcome, decided_by: result.decided_by, rule_id: result.rule_id, detail: result.detail,
  })));
  assertions.service.onChange(() => packetFilter.publishPending());
  feeds.assertions = () => assertions.service.failing().map(({ id, name, result }) => ({ id, name, outcome: result.outcome, expect: result.expect, decided_by: result.decided_by, detail: result.detail, checked_at: result.checked_at }));
  const config = createConfigArea(context);
  // After an apply inside a commit-confirm window, the assertions are checked (and may confirm or roll back).
  config.commitConfirm.verifyWith((onResult) => assertions.service.verifyApplied(onResult));
  context.identity.onAuthenticated((identity, ip) => config.commitConfirm.sawClient(identity.username, ip));
  let cluster: ReturnType<typeof createClusterArea>;
  let acme: ReturnType<typeof createAcmeArea>;
  let dhcp: ReturnType<typeof createDhcpArea>;
  const areas: Area[] = [
    createAuthArea(context),
    createStatusArea(context, { drift: () => packetFilter.service.drift() }),
    packetFilter,
    assertions,
    createSsoArea(context),
    createVpnArea(context, { packetFilter: packetFilter.service, ca: ca.service }),
    ca,
    ids,
    geoip,
    reverseProxy,
    multiwan,
    createAiArea(context, { ids: ids.service }),
    // A certificate published by hand reloads the running proxy that serves it; HTTP-01 goes through the proxy
    // when it holds the responder's port; a local-tls-store target publishes to the API's HTTPS listener.
    (acme = createAcmeArea(context, {
      certificateConsumers: [{ name: 'reverse proxy', reloadIfServing: (id, paths) => reverseProxy.service.reloadIfServing(id, paths) }],
      challengesThroughProxy: () => reverseProxy.service.challengesThroughProxy(),
      localTlsStore: (id, material) => tls.service.publishAcme(id, material),
      otherCertificates: () => [...ca.service.validities(), ...reverseProxy.service.fileValidities(), ...tls.service.fileValidities()],
    })),
    dashboard,
    createPrometheusArea(context, { hits: packetFilter.hits, dashboard: dashboard.service, gateways: multiwan.gatewayHealth, ids: ids.service }),
    createDnsArea(context, { pendingFlags, dnsEvents: feeds.dns }),
    (dhcp = createDhcpArea(context)),
    createTimeArea(context),
    networking,
    createSystemArea(context),
    createSettingsArea(context),
    tls,
    createEventsArea(context),
    createFlowExportArea(context),
    createDiagnosticsArea(context),
    // After the packet filter: the VRRP and state-sync system rules are registered with it.
    (cluster = createClusterArea(context, { packetFilter: packetFilter.service, dashboard: dashboard.service.broadcaster })),
    // Configuration sync between the pair: applies what the peer sends through the configuration lifecycle.
    createClusterSyncArea(context, { config: config.service, cluster: cluster.service, tls: tls.service, acme: acme.service, dhcp: dhcp.service }),
    createUpdatesArea(context),
    createPluginsArea(context, { aliases: packetFilter.service, findings: packetFilter.service.pluginFindings }),
    // The fleet agent applies revisions through the other areas' routes (docs/fleet.md).
    createFleetAgentArea(context),
    // Change sets make the writes of every other area's generated routes.
    createChangesArea(context, { routes: () => areas.flatMap((area) => area.routes) }),
    config,
  ];
  return areas;
}
