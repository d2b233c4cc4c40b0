/**
 * Pending flags of areas other than the packet filter (the wire format's `dns` in GET /pending): each area
 * registers how to read its flag and announces changes, so GET /pending and its stream carry every flag
 * without the packet-filter area depending on the others.
 */
import type { AppContext } from '../context.js';

export const PENDING_FLAG_TOPIC = 'pending.flag';

const registries = new WeakMap<AppContext, Map<string, () => boolean>>();

export function registerPendingFlag(context: AppContext, name: string, read: () => boolean): void {
  let flags = registries.get(context);
  if (!flags) registries.set(context, (flags = new Map()));
  flags.set(name, read);
}

/** The current value of a registered flag; false when no area registered it (the area is not loaded). */
export function readPendingFlag(context: AppContext, name: string): boolean {
  return registries.get(context)?.get(name)?.() ?? false;
}

/** Tells the pending stream that a flag may have changed (it re-sends the report only if it did). */
export function announcePendingFlag(context: AppContext, name: string, pending: boolean): void {
  context.events.emit(PENDING_FLAG_TOPIC, { name, pending });
}
