import type { EventHub } from '../core/event-hub.js';

export const PENDING_FLAG_TOPIC = 'pending.flag';

/**
 * Pending flags of areas other than the packet filter (the wire format's `dns` in GET /pending): the area that
 * owns a flag registers how to read it and announces its changes, so GET /pending and its stream carry every
 * flag without the packet-filter area depending on the others. One per app, made where the areas are wired.
 */
export class PendingFlags {
  private readonly readers = new Map<string, () => boolean>();

  constructor(private readonly events: EventHub) {}

  register(name: string, read: () => boolean): void {
    this.readers.set(name, read);
  }

  /** The current value of a flag; false when no area registered it (the area is not loaded). */
  read(name: string): boolean {
    return this.readers.get(name)?.() ?? false;
  }

  /** Tells the pending stream that a flag may have changed (it re-sends the report only if it did). */
  announce(name: string, pending: boolean): void {
    this.events.emit(PENDING_FLAG_TOPIC, { name, pending });
  }

  onAnnounced(listener: () => void): () => void {
    return this.events.on(PENDING_FLAG_TOPIC, listener);
  }
}
