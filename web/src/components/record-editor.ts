import { ApiError, type ApiClient } from '../api/client';
import type { Row } from '../api/types';

/** A record opened for editing: where it lives, what was read, and the ETag it was read with. */
export interface Editing {
  path: string;
  record: Row;
  etag: string | null;
}

export function conflictMessage(noun: string): string {
  return `This ${noun} was changed by someone else; reloaded. The form now shows what is stored: make your change again and save.`;
}

/** Reads a record (an object or a settings section) with its ETag. */
export async function readForEditing(api: ApiClient, path: string): Promise<Editing> {
  const read = await api.request<Row>('GET', path);
  return { path, record: read.data, etag: read.etag };
}

/**
 * Saves the changed fields with the ETag the record was read with (If-Match where the API checks it). When the
 * API answers 412 — someone else changed the record since — it is read again and handed to `reloaded`, and the
 * save fails with a message saying so; nothing was overwritten. An empty body saves nothing (answers false).
 */
export async function saveEdit(api: ApiClient, editing: Editing, body: Record<string, unknown>, noun: string, reloaded: (fresh: Editing) => void): Promise<boolean> {
  if (Object.keys(body).length === 0) return false;
  try {
    await api.update(editing.path, body, editing.etag);
    return true;
  } catch (failure) {
    if (!(failure instanceof ApiError && failure.status === 412)) throw failure;
    reloaded(await readForEditing(api, editing.path));
    throw new Error(conflictMessage(noun));
  }
}

/**
 * Deletes what the user chose only if it is still what they confirmed: the record's ETag is read before `confirmed`
 * asks, and the DELETE carries it as If-Match, so a change made while the question was open answers 412 and nothing
 * is deleted. `readable`: the API reads the one record (otherwise no tag can be had and the DELETE is plain).
 */
export async function deleteConfirmed(api: ApiClient, path: string, readable: boolean, confirmed: () => boolean, noun: string): Promise<boolean> {
  const etag = readable ? (await api.request('GET', path)).etag : null;
  if (!confirmed()) return false;
  try {
    await api.delete(path, etag);
    return true;
  } catch (failure) {
    if (!(failure instanceof ApiError && failure.status === 412)) throw failure;
    throw new Error(`This ${noun} was changed by someone else while you confirmed; nothing was deleted. The table now shows what is stored.`);
  }
}

/**
 * Flips a yes/no field of a record from a table's button: only if the stored record still holds what the row showed
 * (else nothing is sent and the caller reloads), then with the tag it was read with as If-Match.
 */
export async function toggleField(api: ApiClient, path: string, field: string, shown: boolean, noun: string): Promise<void> {
  const current = await readForEditing(api, path);
  if (current.record[field] !== shown) throw new Error(`This ${noun} was changed by someone else; reloaded. Nothing was changed: look again and choose.`);
  await saveEdit(api, current, { [field]: !shown }, noun, () => undefined);
}
