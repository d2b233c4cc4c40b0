/**
 * What the supervised daemons do, for the event hub: each line they write, an exit nobody asked for, and a
 * restart that brought one back. The supervisors (process-daemons.ts, supervised-process.ts) report here; the
 * app forwards to its hub (areas/events/producers.ts). Process-wide, like the daemons themselves.
 */
export type DaemonEvent =
  | { kind: 'log'; daemon: string; line: string }
  | { kind: 'crashed'; daemon: string; reason: string }
  | { kind: 'restarted'; daemon: string; restarts: number };

const listeners = new Set<(event: DaemonEvent) => void>();

export function reportDaemonEvent(event: DaemonEvent): void {
  for (const listener of listeners) {
    try {
      listener(event);
    } catch {
      // a listener's failure never reaches the supervisor
    }
  }
}

export function onDaemonEvent(listener: (event: DaemonEvent) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
