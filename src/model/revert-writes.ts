import { HttpError } from '../core/errors.js';
import type { ObjectWrite } from './declarations.js';
import type { ConfigObject, ConfigStore } from '../store/config-store.js';

/**
 * Undoes the writes a change hook saw, newest first, with raw store calls (which fire no hooks): when a change
 * could not be applied to the running kernel, tunnel or daemon, the stored configuration goes back to the one in force.
 */
export function revertWrites(store: ConfigStore, objects: readonly ObjectWrite[]): void {
  store.transaction(() => {
    for (const { kind, before, after } of [...objects].reverse()) {
      if (after && !before) store.remove(kind, after.id);
      else if (before && after) store.update(kind, before.id, before.data);
      else if (before && !after) store.insert(kind, before.data, before.id);
    }
  });
}

/** The objects of `kinds` as stored now: what `writesSince` compares with later. */
export function snapshotKinds(store: ConfigStore, kinds: readonly string[]): ConfigObject[] {
  return kinds.flatMap((kind) => store.list(kind));
}

/**
 * The writes that turned `snapshot` into what the store holds now, for the kinds it was taken of: singletons
 * (settings sections) too, whose writes a change hook does not see as objects. `revertWrites` undoes them.
 */
export function writesSince(store: ConfigStore, kinds: readonly string[], snapshot: readonly ConfigObject[]): ObjectWrite[] {
  const now = snapshotKinds(store, kinds);
  const was = new Map(snapshot.map((object) => [`${object.kind}/${object.id}`, object]));
  const writes: ObjectWrite[] = [];
  for (const after of now) {
    const before = was.get(`${after.kind}/${after.id}`);
    was.delete(`${after.kind}/${after.id}`);
    if (!before) writes.push({ kind: after.kind, after });
    else if (JSON.stringify(before.data) !== JSON.stringify(after.data)) writes.push({ kind: after.kind, before, after });
  }
  for (const before of was.values()) writes.push({ kind: before.kind, before });
  return writes;
}

/** The apply's error, saying that the change was not kept (a 500 stays a 500). */
export function notKept(error: unknown): unknown {
  if (!(error instanceof HttpError)) return error;
  return new HttpError(error.statusCode, `${error.message}; the change was not kept`, error.headers);
}
