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
  /** Producers that run only while their topic has a listener of its own: topic → start, and the stop of the running one. */
  private readonly onDemand = new Map<string, { start: () => () => void; stop: (() => void) | null }>();

  constructor(private readonly clock: Clock) {}

  on(topic: string, listener: HubListener): () => void {
    let set = this.listeners.get(topic);
    if (!set) this.listeners.set(topic, (set = new Set()));
    set.add(listener);
    this.follow(topic);
    return () => {
      set.delete(listener);
      this.follow(topic);
    };
  }

  /**
   * A producer too costly to run for nobody (conntrack's new connections): `start` runs while `topic` has at least
   * one listener (the '*' ones do not count) and its returned stop when the last one leaves. Returns the withdrawal.
   */
  produceOnDemand(topic: string, start: () => () => void): () => void {
    this.onDemand.set(topic, { start, stop: null });
    this.follow(topic);
    return () => {
      this.onDemand.get(topic)?.stop?.();
      this.onDemand.delete(topic);
    };
  }

  private follow(topic: string): void {
    const producer = this.onDemand.get(topic);
    if (!producer) return;
    const wanted = (this.listeners.get(topic)?.size ?? 0) > 0;
    if (wanted && !producer.stop) producer.stop = producer.start();
    else if (!wanted && producer.stop) {
      producer.stop();
      producer.stop = null;
    }
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
