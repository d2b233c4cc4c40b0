import { HttpError } from '../../core/errors.js';
import type { ObjectWrite } from '../../model/declarations.js';
import type { ConfigStore } from '../../store/config-store.js';

/**
 * Undoes the writes a change hook saw, newest first, with raw store calls (which fire no hooks): when a change
 * could not be applied to the running tunnel or daemon, the stored configuration goes back to the one in force.
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

/** The apply's error, saying that the change was not kept (a 500 stays a 500). */
export function notKept(error: unknown): unknown {
  if (!(error instanceof HttpError)) return error;
  return new HttpError(error.statusCode, `${error.message}; the change was not kept`, error.headers);
}
