import { isoTime, type Clock } from './clock.js';

/** One announcement: what happened (`topic`), when, and a small JSON payload. */
export interface HubEvent {
  topic: string;
  at: string;
  payload: Record<string, unknown>;
}

export type HubListener = (event: HubEvent) => void;

/**
 * A small in-process event hub. Services announce configuration events here (applied, commit-confirm
 * started / confirmed / rolled back); live streams such as the pending SSE stream subscribe to a topic or
 * to every topic ('*'). A failing listener never stops the others or the emitter.
 */
export class EventHub {
  private readonly listeners = new Map<string, Set<HubListener>>();

  constructor(private readonly clock: Clock) {}

  on(topic: string, listener: HubListener): () => void {
    let set = this.listeners.get(topic);
    if (!set) this.listeners.set(topic, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  emit(topic: string, payload: Record<string, unknown>): HubEvent {
    const event: HubEvent = { topic, at: isoTime(this.clock.now()), payload };
    for (const listener of [...(this.listeners.get(topic) ?? []), ...(this.listeners.get('*') ?? [])]) {
      try {
        listener(event);
      } catch {
        // a subscriber's failure is its own business
      }
    }
    return event;
  }
}
