import type { AppContext } from '../../context.js';
import { EVENT_TOPICS } from '../../core/events.js';
import { requestActor } from '../../http/request-actor.js';
import { onDaemonEvent } from '../../platform/daemon-events.js';

/**
 * The producers that are not a service of one area: packet-filter log lines from the platform's blocked-packet
 * reader, the audit of configuration writes (who changed which object), the supervised daemons' lines, exits
 * and restarts (the data directory's free space: disk-space.ts). Each announces on the hub; returns the stop.
 */
export function startProducers(context: AppContext): () => void {
  const { events } = context;
  const stops: (() => void)[] = [];

  stops.push(context.platform.traffic.onBlocked?.((packet) => events.emit(EVENT_TOPICS.packetLog, { ...packet })) ?? (() => undefined));
  // conntrack's new connections are followed only while someone listens (a plugin with the connection_new hook runs).
  const newConnections = context.platform.traffic.onNewConnection?.bind(context.platform.traffic);
  if (newConnections) stops.push(events.produceOnDemand(EVENT_TOPICS.connectionNew, () => newConnections((connection) => events.emit(EVENT_TOPICS.connectionNew, { ...connection }))));

  // Every committed configuration write, with the actor of the request that made it (none: the appliance itself).
  stops.push(context.models.onCommitted((change) => {
    const who = requestActor.getStore();
    const written = new Set(change.objects.map((object) => object.kind));
    const entries = [
      ...change.objects.map((object) => ({
        action: object.before && object.after ? 'update' : object.after ? 'create' : 'delete',
        object_kind: object.kind,
        object_id: (object.after ?? object.before)?.id ?? null,
      })),
      // Singletons (settings sections) are written without object records.
      ...[...change.kinds].filter((kind) => !written.has(kind)).map((kind) => ({ action: 'update', object_kind: kind, object_id: null })),
    ];
    for (const entry of entries) {
      events.emit(EVENT_TOPICS.audit, { category: 'config', ...entry, outcome: 'success', actor: who?.actor ?? null, client_ip: who?.clientIp ?? null, details: null });
    }
  }));

  stops.push(onDaemonEvent((event) => {
    if (event.kind === 'log') events.emit(EVENT_TOPICS.daemonLog, { daemon: event.daemon, line: event.line });
    else if (event.kind === 'crashed') events.emit(EVENT_TOPICS.daemonCrashed, { daemon: event.daemon, reason: event.reason });
    else events.emit(EVENT_TOPICS.daemonRestarted, { daemon: event.daemon, restarts: event.restarts });
  }));

  return () => {
    for (const stop of stops) stop();
  };
}
