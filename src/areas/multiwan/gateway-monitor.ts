/**
 * The gateway monitor: probes through the platform (what a probe may connect to), the tick that probes the
 * gateways that are due, and what follows a state change (routing re-applied, flows cut for failover).
 */
import { isIP } from 'node:net';
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import type { ConfigData, ConfigObject, ConfigStore } from '../../store/config-store.js';
import { adminAllowList } from '../../net/admin-allow-list.js';
import { allowListOf } from '../../net/special-addresses.js';
import type { GatewayHealthStore, ProbeSample } from './gateway-health-store.js';
import type { GatewayGroups } from './groups.js';
import type { RoutingApply } from './routing-apply.js';

/** Next hops a probe is never let reach without the administrator's list: loopback and IPv4 link-local (metadata). */
const NEVER_A_GATEWAY = allowListOf(['127.0.0.0/8', '::1', '169.254.0.0/16', '0.0.0.0/8', '::']);

/** The literal address a tcp, http or dns probe connects to (null for icmp, or a host name: checked when probed). */
export function probeHost(data: ConfigData): string | null {
  if (!['tcp', 'http', 'dns'].includes(String(data.monitor_kind))) return null;
  const target = String(data.monitor_target ?? data.next_hop);
  const host = /^https?:\/\//.test(target) ? (URL.canParse(target) ? new URL(target).hostname.replace(/^\[|\]$/g, '') : '') : target;
  return isIP(host) ? host : null;
}

/**
 * What a tcp, http or dns probe may reach although special: the administrator's outbound allow-list, and the
 * gateway's own next hop (probing the router itself is the normal case) unless it is loopback or IPv4
 * link-local (the cloud metadata range), which no gateway is.
 */
export function probeAllowList(data: ConfigData, store: ConfigStore): string[] {
  const hop = String(data.next_hop);
  return [...adminAllowList(store), ...(isIP(hop) && !NEVER_A_GATEWAY.check(hop, isIP(hop) === 6 ? 'ipv6' : 'ipv4') ? [hop] : [])];
}

export class GatewayMonitor {
  /** Gateways whose probe is running (a slow probe never overlaps the next tick's). */
  private readonly probing = new Set<string>();

  constructor(
    private readonly context: AppContext,
    private readonly collections: { gateways: CollectionModel; groups: CollectionModel; policies: CollectionModel },
    private readonly health: GatewayHealthStore,
    private readonly groups: GatewayGroups,
    private readonly routing: RoutingApply,
  ) {}

  /** Runs one probe: the given sample, or a real one through the platform when none is given. */
  async probe(id: string, injected?: { success?: boolean; rtt_ms?: number | null; error?: string | null }): Promise<ConfigObject> {
    const gateway = this.collections.gateways.find(id);
    const data = gateway.data;
    let sample: ProbeSample;
    if (injected && injected.success !== undefined) {
      sample = { success: injected.success, rtt_ms: injected.rtt_ms ?? null, error: injected.error ?? null };
    } else {
      const kind = data.monitor_kind as 'icmp' | 'tcp' | 'http' | 'dns';
      sample = await this.context.platform.routing.probe({
        kind, target: String(data.monitor_target ?? data.next_hop), interface: String(data.interface),
        port: (data.monitor_port as number | null) ?? (kind === 'tcp' ? 443 : null), expect: (data.monitor_expect as string | null) ?? null,
        timeout_ms: Number(data.timeout_ms),
        allow_list: probeAllowList(data, this.context.store),
      });
    }
    const before = this.routing.applied.loadedByThisProcess ? this.groups.selections() : undefined;
    if (this.health.recordSample(gateway, sample) && before) await this.followStateChange(id, before);
    return this.collections.gateways.find(id);
  }

  /**
   * Probes every enabled gateway whose interval has elapsed on the service clock (called by the monitor tick),
   * side by side and never twice at once for one gateway. A state change re-applies the routing that was
   * applied, so groups fail over (and back) without anyone calling /apply.
   */
  async monitorTick(): Promise<void> {
    const now = this.context.clock.now();
    const due = this.collections.gateways.objects().filter((gateway) => {
      if (gateway.data.enabled === false || this.probing.has(gateway.id)) return false;
      const last = this.health.lastProbe(gateway.id);
      return now >= (last ? Date.parse(last) : Date.parse(gateway.created_at)) + Number(gateway.data.interval_ms);
    });
    await Promise.all(due.map(async (gateway) => {
      this.probing.add(gateway.id);
      try {
        await this.probe(gateway.id);
      } catch (error) {
        this.context.log.debug({ gateway: gateway.id, err: (error as Error).message }, 'probe failed');
      } finally {
        this.probing.delete(gateway.id);
      }
    }));
  }

  /**
   * After a gateway changed state: apply again (when routing was applied), then, for groups whose selection
   * moved and that kill states on failover, cut the connections their policies labelled (they re-establish
   * through the gateway now selected).
   */
  private async followStateChange(gatewayId: string, before: Map<string, string>): Promise<void> {
    try {
      if (!(await this.routing.apply({ onlyWhenChanged: true, source: 'applied' }))) return;
    } catch (error) {
      this.context.log.warn({ gateway: gatewayId, err: (error as Error).message }, 'multi-WAN: re-apply after a gateway state change failed');
      return;
    }
    const after = this.groups.selections();
    for (const group of this.collections.groups.objects()) {
      if (before.get(group.id) === after.get(group.id) || group.data.kill_states_on_failover === false) continue;
      for (const policy of this.collections.policies.objects().filter((p) => p.data.action_kind === 'set_group' && p.data.target_id === group.id && p.data.status === 'active')) {
        await this.context.platform.routing.killStates(`pbr:${policy.id}`).catch((error: Error) => this.context.log.warn({ err: error.message }, 'multi-WAN: flows not cut'));
      }
    }
  }
}
