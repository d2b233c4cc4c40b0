import type { EventHub, HubEvent } from '../../core/event-hub.js';
import { CONFIG_TOPICS } from '../config/service.js';
import { DRIFT_TOPIC } from '../packet-filter/kernel-sync.js';
import { APPLIANCE_ACTIVATION_TOPIC } from '../updates/appliance.js';
import { EVENT_TOPICS } from '../../core/events.js';

/**
 * Which event-hub topic reaches which plugin hook: the ONE place plugins subscribe to the hub. A topic added to
 * the hub (rule hits from the packet-filter log, IDS alerts, gateway changes, DNS blocks, DHCP leases) is
 * delivered to plugins by adding its line here.
 */
export const HOOK_TOPICS: Readonly<Record<string, string>> = {
  [CONFIG_TOPICS.applied]: 'log_event',
  [CONFIG_TOPICS.commitConfirm]: 'log_event',
  [DRIFT_TOPIC]: 'log_event',
  [APPLIANCE_ACTIVATION_TOPIC]: 'log_event',
  // The notification bus (src/core/events.ts): packet-filter log lines carry the deciding rule's id.
  [EVENT_TOPICS.packetLog]: 'post_rule',
  [EVENT_TOPICS.idsAlert]: 'ids_alert',
  // conntrack NEW events of the firewall's state table (rate-limited).
  [EVENT_TOPICS.connectionNew]: 'connection_new',
  [EVENT_TOPICS.gatewayState]: 'log_event',
  [EVENT_TOPICS.daemonCrashed]: 'log_event',
  [EVENT_TOPICS.daemonRestarted]: 'log_event',
  // Unbound's blocklist filter (its log lines) and Kea's run_script hook.
  [EVENT_TOPICS.dnsBlock]: 'dns_query',
  [EVENT_TOPICS.dhcpLease]: 'dhcp_lease',
};

/**
 * Subscribes to the mapped topics whose hook is in `hooks` (the hooks of the running plugins: a topic produced on
 * demand runs only while a plugin wants it); `deliver` gets the hook name and the event. Returns the unsubscribe.
 */
export function subscribeHooks(events: EventHub, hooks: ReadonlySet<string>, deliver: (hook: string, event: HubEvent) => void): () => void {
  const offs = Object.entries(HOOK_TOPICS).filter(([, hook]) => hooks.has(hook)).map(([topic, hook]) => events.on(topic, (event) => deliver(hook, event)));
  return () => offs.forEach((off) => off());
}
