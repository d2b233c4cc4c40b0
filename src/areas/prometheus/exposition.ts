/**
 * What GET /api/v1/metrics/prometheus exposes: each section reads the same service the JSON API reads for the
 * same figure (rule hits from the counters GET /rules answers, gateway health from the multi-WAN monitor, the
 * state table from the dashboard's shared read, ...). A section that cannot be read says so in
 * `bulwark_scrape_section_ok` instead of failing the whole scrape.
 */
import type { AppContext } from '../../context.js';
import { BUILD } from '../../core/build-info.js';
import { PrometheusText, type Sample } from '../../metrics/prometheus-text.js';
import type { DashboardService } from '../dashboard/service.js';
import type { RuleHitCounters } from '../packet-filter/hit-counters.js';
import { RULE_KIND } from '../packet-filter/rules.js';
import type { GatewayHealthStore } from '../multiwan/gateway-health-store.js';
import type { IdsService } from '../ids/service.js';

export interface ExpositionSources {
  hits: RuleHitCounters;
  dashboard: DashboardService;
  gateways: GatewayHealthStore;
  ids: IdsService;
}

type Section = (out: PrometheusText) => Promise<void>;

const GATEWAY_STATES = ['up', 'warning', 'down', 'unknown'] as const;
const ms = (value: number | null | undefined) => (value === null || value === undefined ? [] : [value / 1000]);

export class PrometheusExposition {
  constructor(private readonly context: AppContext, private readonly sources: ExpositionSources) {}

  async render(): Promise<string> {
    const out = new PrometheusText();
    const sections: [string, Section][] = [
      ['packet_filter', (o) => this.packetFilter(o)],
      ['rules', (o) => this.rules(o)],
      ['interfaces', (o) => this.interfaces(o)],
      ['gateways', (o) => this.gateways(o)],
      ['dns', (o) => this.dns(o)],
      ['dhcp', (o) => this.dhcp(o)],
      ['vpn', (o) => this.vpn(o)],
      ['ids', (o) => this.ids(o)],
      ['api', (o) => this.api(o)],
      ['process', (o) => this.process(o)],
    ];
    const outcome: Sample[] = [];
    for (const [name, section] of sections) {
      // Each section writes into its own buffer: one that fails halfway leaves nothing behind.
      const own = new PrometheusText();
      try {
        await section(own);
        out.append(own);
        outcome.push({ labels: { section: name }, value: 1 });
      } catch (error) {
        this.context.log.debug({ err: error, section: name }, 'a Prometheus section could not be read');
        outcome.push({ labels: { section: name }, value: 0 });
      }
    }
    out.family('bulwark_info', 'gauge', 'Build of this appliance (always 1).', [{ labels: { version: BUILD.version, platform: this.context.config.platform }, value: 1 }]);
    out.family('bulwark_scrape_section_ok', 'gauge', 'Whether a section of this exposition could be read (1) or not (0).', outcome);
    return out.text();
  }

  private async packetFilter(out: PrometheusText): Promise<void> {
    const { platform } = this.context;
    const [status, table, counters] = await Promise.all([
      platform.packetFilter.status(), this.sources.dashboard.tables.get(1000), platform.traffic.ruleCounters(),
    ]);
    const byProtocol = new Map<string, number>();
    for (const flow of table.flows) byProtocol.set(flow.protocol, (byProtocol.get(flow.protocol) ?? 0) + 1);
    out.family('bulwark_pf_running', 'gauge', 'Whether the packet filter is loaded.', [{ value: status.running ? 1 : 0 }])
      .family('bulwark_pf_rules_loaded', 'gauge', 'Rules in the ruleset in force.', [{ value: status.rules }])
      .family('bulwark_pf_states', 'gauge', 'Entries in the state (connection tracking) table.', [{ value: table.total }])
      .family('bulwark_pf_states_by_protocol', 'gauge', 'Entries of the state table read, by protocol.',
        [...byProtocol].sort(([a], [b]) => (a < b ? -1 : 1)).map(([protocol, value]) => ({ labels: { protocol }, value })))
      .family('bulwark_pf_kernel_packets_total', 'counter', 'Packets counted by a named packet-filter counter since it was loaded.',
        counters.map((c) => ({ labels: { counter: c.name }, value: c.packets })))
      .family('bulwark_pf_kernel_bytes_total', 'counter', 'Bytes counted by a named packet-filter counter since it was loaded.',
        counters.map((c) => ({ labels: { counter: c.name }, value: c.bytes })));
  }

  /** Per-rule hits: the totals GET /rules answers, as fresh as it answers them (they survive reloads and restarts). */
  private async rules(out: PrometheusText): Promise<void> {
    // As GET /rules reads them: a sample first when the last one is older than the freshness bound.
    if (this.sources.hits.stale()) await this.sources.hits.fresh();
    const rules = this.context.store.list(RULE_KIND);
    const hits = rules.map((rule) => ({ id: rule.id, ...this.sources.hits.of(rule.id) }));
    out.family('bulwark_rule_info', 'gauge', 'One per configured rule: its action, status and description (always 1).',
      rules.map((rule) => ({
        labels: { rule_id: rule.id, action: String(rule.data.action ?? ''), status: String(rule.data.status ?? ''), description: String(rule.data.description ?? '') },
        value: 1,
      })))
      .family('bulwark_rule_hits_packets_total', 'counter', 'Packets that matched a rule since counting began (as GET /rules answers).',
        hits.map((h) => ({ labels: { rule_id: h.id }, value: h.hits.packets })))
      .family('bulwark_rule_hits_bytes_total', 'counter', 'Bytes that matched a rule since counting began (as GET /rules answers).',
        hits.map((h) => ({ labels: { rule_id: h.id }, value: h.hits.bytes })))
      .family('bulwark_rule_last_hit_timestamp_seconds', 'gauge', 'When a rule last matched (unix seconds); absent for a rule never hit.',
        hits.filter((h) => h.last_hit_at !== null).map((h) => ({ labels: { rule_id: h.id }, value: Date.parse(h.last_hit_at!) / 1000 })));
  }

  private async interfaces(out: PrometheusText): Promise<void> {
    const counters = await this.context.platform.traffic.interfaces();
    const family = (name: string, help: string, field: 'bytes_in' | 'bytes_out' | 'packets_in' | 'packets_out') =>
      out.family(name, 'counter', help, counters.map((c) => ({ labels: { interface: c.name }, value: c[field] })));
    family('bulwark_interface_receive_bytes_total', 'Bytes received on an interface.', 'bytes_in');
    family('bulwark_interface_transmit_bytes_total', 'Bytes sent on an interface.', 'bytes_out');
    family('bulwark_interface_receive_packets_total', 'Packets received on an interface.', 'packets_in');
    family('bulwark_interface_transmit_packets_total', 'Packets sent on an interface.', 'packets_out');
  }

  private async gateways(out: PrometheusText): Promise<void> {
    const gateways = this.sources.gateways.gateways.objects().map((g) => ({ name: String(g.data.name), health: this.sources.gateways.healthView(g.id) }));
    out.family('bulwark_gateway_up', 'gauge', 'Whether the gateway monitor holds a gateway up (1) or not (0).',
      gateways.map((g) => ({ labels: { gateway: g.name }, value: g.health.state === 'up' ? 1 : 0 })))
      .family('bulwark_gateway_state', 'gauge', 'The monitor\'s state of a gateway: 1 for the state it is in.',
        gateways.flatMap((g) => GATEWAY_STATES.map((state) => ({ labels: { gateway: g.name, state }, value: g.health.state === state ? 1 : 0 }))))
      .family('bulwark_gateway_rtt_seconds', 'gauge', 'Round-trip time of the last successful probe.',
        gateways.flatMap((g) => ms(g.health.last_rtt_ms).map((value) => ({ labels: { gateway: g.name }, value }))))
      .family('bulwark_gateway_jitter_seconds', 'gauge', 'Jitter over the recent probes.',
        gateways.flatMap((g) => ms(g.health.last_jitter_ms).map((value) => ({ labels: { gateway: g.name }, value }))))
      .family('bulwark_gateway_loss_ratio', 'gauge', 'Share of the recent probes that failed (0..1).',
        gateways.flatMap((g) => (g.health.last_loss_pct === null ? [] : [{ labels: { gateway: g.name }, value: g.health.last_loss_pct / 100 }])));
  }

  private async dns(out: PrometheusText): Promise<void> {
    const stats = await this.context.platform.daemons.dnsStats();
    out.family('bulwark_dns_up', 'gauge', 'Whether the DNS resolver runs.', [{ value: stats.running ? 1 : 0 }])
      .family('bulwark_dns_queries_total', 'counter', 'Queries the resolver answered.', [{ value: stats.queries_total }])
      .family('bulwark_dns_cache_hits_total', 'counter', 'Answers from the resolver\'s cache.', [{ value: stats.cache.hits }])
      .family('bulwark_dns_cache_misses_total', 'counter', 'Queries the cache could not answer.', [{ value: stats.cache.misses }])
      .family('bulwark_dns_cache_entries', 'gauge', 'Entries in the resolver\'s cache.', [{ value: stats.cache.entries }])
      .family('bulwark_dns_blocklist_hits_total', 'counter', 'Queries answered by a blocklist (response policy) rule.', [{ value: stats.rpz.hits }]);
  }

  private async dhcp(out: PrometheusText): Promise<void> {
    const { daemons } = this.context.platform;
    const running = (await daemons.status('kea-dhcp4')).running;
    const statistics = running ? await daemons.dhcpStatistics() : null;
    const subnets = statistics?.subnets ?? [];
    out.family('bulwark_dhcp4_up', 'gauge', 'Whether the DHCPv4 server runs.', [{ value: running ? 1 : 0 }])
      .family('bulwark_dhcp4_pool_addresses', 'gauge', 'Addresses in the pools of a subnet (Kea\'s statistics).',
        subnets.map((s) => ({ labels: { subnet: s.subnet }, value: s.total_addresses })))
      .family('bulwark_dhcp4_leases_assigned', 'gauge', 'Leases assigned in a subnet (Kea\'s statistics).',
        subnets.map((s) => ({ labels: { subnet: s.subnet }, value: s.assigned_addresses })))
      .family('bulwark_dhcp4_packets_total', 'counter', 'DHCPv4 packets counted by Kea, by kind (pkt4-received, pkt4-ack-sent, ...).',
        Object.entries(statistics?.counters ?? {}).filter(([kind]) => /^pkt4-[a-z-]+$/.test(kind)).sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([kind, value]) => ({ labels: { kind }, value })));
  }

  private async vpn(out: PrometheusText): Promise<void> {
    const { platform, store } = this.context;
    const tunnels = store.list('wg_tunnel');
    const live = await Promise.all(tunnels.map(async (tunnel) => ({
      tunnel: String(tunnel.data.name ?? tunnel.data.interface), status: await platform.wireguard.status(String(tunnel.data.interface)),
    })));
    const peers = live.flatMap(({ tunnel, status }) => status.peers.map((peer) => ({ tunnel, peer })));
    const ipsec = await platform.ipsec.status();
    const established = ipsec.sas.filter((sa) => sa.ike_state === 'ESTABLISHED').length;
    out.family('bulwark_wireguard_up', 'gauge', 'Whether a WireGuard tunnel\'s interface runs.',
      live.map(({ tunnel, status }) => ({ labels: { tunnel }, value: status.running ? 1 : 0 })))
      .family('bulwark_wireguard_peers', 'gauge', 'Peers on a running WireGuard interface.',
        live.map(({ tunnel, status }) => ({ labels: { tunnel }, value: status.peers.length })))
      .family('bulwark_wireguard_peer_receive_bytes_total', 'counter', 'Bytes received from a WireGuard peer.',
        peers.map(({ tunnel, peer }) => ({ labels: { tunnel, public_key: peer.public_key }, value: peer.transfer_rx })))
      .family('bulwark_wireguard_peer_transmit_bytes_total', 'counter', 'Bytes sent to a WireGuard peer.',
        peers.map(({ tunnel, peer }) => ({ labels: { tunnel, public_key: peer.public_key }, value: peer.transfer_tx })))
      .family('bulwark_wireguard_peer_handshake_age_seconds', 'gauge', 'Seconds since a peer\'s last handshake; absent before the first.',
        peers.filter(({ peer }) => peer.latest_handshake_secs_ago >= 0).map(({ tunnel, peer }) => ({ labels: { tunnel, public_key: peer.public_key }, value: peer.latest_handshake_secs_ago })))
      .family('bulwark_ipsec_up', 'gauge', 'Whether the IKE daemon (charon) runs.', [{ value: ipsec.running ? 1 : 0 }])
      .family('bulwark_ipsec_sas_configured', 'gauge', 'IPsec SAs in the configuration.', [{ value: store.list('ipsec_sa').length }])
      .family('bulwark_ipsec_sas_established', 'gauge', 'IKE SAs charon reports ESTABLISHED.', [{ value: established }]);
  }

  private async ids(out: PrometheusText): Promise<void> {
    const stats = await this.sources.ids.stats();
    out.family('bulwark_ids_running', 'gauge', 'Whether the IDS/IPS engine runs.', [{ value: stats.running ? 1 : 0 }])
      .family('bulwark_ids_rules_loaded', 'gauge', 'Signatures the engine loaded.', [{ value: stats.loaded_rules }])
      .family('bulwark_ids_packets_inspected_total', 'counter', 'Packets the engine inspected.', [{ value: stats.packets_inspected }])
      .family('bulwark_ids_drops_total', 'counter', 'Packets the engine dropped.', [{ value: stats.stats.drops_total }])
      .family('bulwark_ids_alerts_total', 'counter', 'Alerts the engine raised.', [{ value: stats.alerts_total }])
      .family('bulwark_ids_alerts_stored', 'gauge', 'Alerts kept on the appliance, by severity.',
        stats.severity_counts.map(([severity, value]) => ({ labels: { severity }, value })))
      .family('bulwark_ids_engine_restarts_total', 'counter', 'Automatic restarts of the engine.', [{ value: stats.engine_restarts }]);
  }

  private async api(out: PrometheusText): Promise<void> {
    const requests = this.context.requests;
    out.family('bulwark_http_requests_total', 'counter', 'API requests answered, by method, route template and status.',
      requests.requestCounts().map((c) => ({ labels: { method: c.method, route: c.route, status: c.status }, value: c.count })))
      .histogram('bulwark_http_request_duration_seconds', 'Time to answer an API request, by method and route template.', requests.latencyHistograms());
  }

  private async process(out: PrometheusText): Promise<void> {
    const runtime = this.sources.dashboard.runtime();
    out.family('bulwark_process_resident_memory_bytes', 'gauge', 'Resident memory of the API process.', [{ value: runtime.rss }])
      .family('bulwark_process_heap_used_bytes', 'gauge', 'V8 heap in use.', [{ value: runtime.heap_used }])
      .family('bulwark_process_uptime_seconds', 'gauge', 'Seconds since the API process started.', [{ value: runtime.uptime_seconds }])
      .family('bulwark_process_event_loop_delay_seconds', 'gauge', 'Mean event-loop delay since the last dashboard tick.', [{ value: runtime.event_loop_delay_ms.mean / 1000 }])
      .family('bulwark_dashboard_sockets', 'gauge', 'Open dashboard WebSockets.', [{ value: runtime.dashboard_sockets }]);
  }
}
