import type { AppContext } from '../../context.js';
import { EVENT_TOPICS } from '../../core/events.js';
import { daemonRuntime } from '../../platform/daemon-runtime.js';
import { leaseEventToken, parseLeaseEvent } from '../../platform/kea-lease-events.js';
import { PerSecondBudget } from '../../platform/per-second-budget.js';

/** Most lease events announced per second (a DHCP storm must not flood the hub and its subscribers). */
const MAX_LEASE_EVENTS_PER_SECOND = 100;

/**
 * Announces Kea's lease events on the event hub (`dhcp.lease`): the lines its run_script hook writes to Kea's
 * output (src/platform/kea-lease-events.ts), checked against the token of the script in Kea's runtime directory.
 * Returns the stop.
 */
export function startLeaseEvents(context: AppContext): () => void {
  const runtime = daemonRuntime(context.config, 'kea-dhcp4', context.platform.simulated);
  const budget = new PerSecondBudget(MAX_LEASE_EVENTS_PER_SECOND);
  return context.platform.daemons.leaseEventLines((line) => {
    // Read each time: an apply may have written the script since (lease events are few).
    const token = leaseEventToken(runtime);
    const event = token && parseLeaseEvent(line, token);
    if (event && budget.take()) context.events.emit(EVENT_TOPICS.dhcpLease, { ...event });
  });
}
