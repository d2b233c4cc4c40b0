import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import type { Row } from '../api/types';
import type { Query } from '../api/client';
import { DataTable, type Column } from './data-table';
import { ErrorAlert, Notice, messageOf } from './error-alert';
import { RecordForm, type FieldSpec } from './record-form';
import { deleteConfirmed, readForEditing, saveEdit, type Editing } from './record-editor';
import { useLoad } from './use-load';

interface CollectionSectionProps {
  title: string;
  /** API path of the list, e.g. `/aliases`. */
  path: string;
  query?: Query;
  columns: readonly Column<Row>[];
  /** The permission a write needs: without it no write is offered. */
  writePermission?: string;
  /** Fields of the create form (POST to `path`); none: no create form. */
  createFields?: readonly FieldSpec[];
  /** What one record is called ("alias"), for "Add alias" and "New alias". */
  itemName?: string;
  /** Fields of the edit form (PUT `path/{id}` with If-Match); none: no Edit button. */
  editFields?: readonly FieldSpec[];
  /** Where one record lives for Edit and Delete, when not `path/{id}` (e.g. `/interfaces/config/{name}`). */
  itemPath?: (row: Row) => string;
  /** Whether the API reads one record (GET `path/{id}`, with its ETag); otherwise the edit starts from the row. */
  readEach?: boolean;
  /** Rows that may be edited or deleted (e.g. not the built-in ones); default all. */
  canChange?: (row: Row) => boolean;
  /** Up/Down buttons: PUT this path with every id in the new order under `reorderField`. */
  reorder?: { path: string; field: string };
  /** Delete button per row (DELETE `path/{id}`). */
  deletable?: boolean;
  /** The name a delete confirmation shows. */
  describe?: (row: Row) => string;
  /** Extra per-row buttons, given a reload for after they act and where to report their outcome. */
  rowActions?: (row: Row, reload: () => void, report: RowActionReport) => ComponentChildren;
  empty?: string;
  /** Lists that are not bare arrays (e.g. `{entries: [...]}`): how to find the rows. */
  pick?: (data: unknown) => Row[];
  /** Re-read the list this often (live state, e.g. gateways). */
  refreshMs?: number;
}

/** Where a row's own button reports: a refusal in the section's alert, a success as its status line. */
export interface RowActionReport {
  error(message: string | null): void;
  done(message: string): void;
}

const asRows = (data: unknown): Row[] => (Array.isArray(data) ? (data as Row[]) : []);

/** A declared collection of the API as a table, with create and delete when the user may write. */
export function CollectionSection(props: CollectionSectionProps) {
  const { api, can } = useSession();
  const { title, path, query, columns, writePermission, createFields, editFields, readEach = true, canChange = () => true, reorder, itemName = 'record', deletable, describe, rowActions, empty, pick = asRows, refreshMs } = props;
  const itemPath = props.itemPath ?? ((row: Row) => `${path}/${encodeURIComponent(String(row.id))}`);
  const mayWrite = writePermission ? can(writePermission) : false;
  const list = useLoad(() => api.request<unknown>('GET', path, { query }), `${path}?${JSON.stringify(query ?? {})}`);
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<Editing | null>(null);
  useEffect(() => {
    if (!refreshMs) return undefined;
    const timer = setInterval(list.reload, refreshMs);
    return () => clearInterval(timer);
  }, [refreshMs, list.reload]);
  const [actionError, setActionError] = useState<string | null>(null);
  const [actionDone, setActionDone] = useState<string | null>(null);
  const report: RowActionReport = { error: setActionError, done: setActionDone };
  const rows = list.data ? pick(list.data.data) : [];

  const act = async (action: () => Promise<void>) => {
    setActionError(null);
    try {
      await action();
    } catch (failure) {
      setActionError(messageOf(failure));
    }
  };

  const remove = (row: Row) => {
    const name = describe?.(row) ?? String(row.name ?? row.id);
    void act(async () => {
      try {
        // the tag comes from the one-object read the section edits with; a list without an edit form has none
        await deleteConfirmed(api, itemPath(row), readEach && editFields !== undefined, () => confirm(`Delete ${name}?`), itemName);
      } finally {
        list.reload();
      }
    });
  };

  // the record as the API answers it now, with its ETag: the save sends that tag back as If-Match
  const edit = (row: Row) =>
    act(async () => {
      setCreating(false);
      setEditing(readEach ? await readForEditing(api, itemPath(row)) : { path: itemPath(row), record: row, etag: null });
    });

  const move = (index: number, by: -1 | 1) =>
    act(async () => {
      const ids = rows.map((row) => String(row.id));
      [ids[index], ids[index + by]] = [ids[index + by], ids[index]];
      await api.put(reorder!.path, { [reorder!.field]: ids });
      list.reload();
    });

  const showActions = (mayWrite && (deletable || editFields || reorder)) || rowActions;
  return (
    <section class="panel" aria-label={title}>
      <header class="panel-head">
        <h2>{title}</h2>
        <span class="count">{list.data ? `${list.data.total ?? rows.length} total` : ''}</span>
        {mayWrite && createFields && !creating && (
          <button
            type="button"
            onClick={() => {
              setEditing(null);
              setCreating(true);
            }}
          >
            Add {itemName}
          </button>
        )}
      </header>
      {creating && createFields && (
        <RecordForm
          title={`New ${itemName}`}
          fields={createFields}
          submitLabel="Create"
          onCancel={() => setCreating(false)}
          onSubmit={async (body) => {
            await api.post(path, body);
            setCreating(false);
            list.reload();
          }}
        />
      )}
      {editing && editFields && (
        <RecordForm
          key={editing.path}
          title={`Edit ${itemName}`}
          fields={editFields}
          record={editing.record}
          submitLabel="Save"
          onCancel={() => setEditing(null)}
          onSubmit={async (body) => {
            // refused as stale: the form shows the record as stored now, and so does the table
            await saveEdit(api, editing, body, itemName, (fresh) => {
              setEditing(fresh);
              list.reload();
            });
            setEditing(null);
            list.reload();
          }}
        />
      )}
      <ErrorAlert message={list.error ?? actionError} />
      {actionDone && <Notice>{actionDone}</Notice>}
      {!list.error && (
        <DataTable
          caption={title}
          rows={rows}
          columns={columns}
          empty={list.loading && !list.data ? 'Loading…' : empty}
          actions={
            showActions
              ? (row, index) => (
                  <>
                    {mayWrite && reorder && (
                      <>
                        <button type="button" class="secondary" disabled={index === 0} onClick={() => move(index, -1)} aria-label={`Move ${itemName} ${index + 1} up`}>
                          Up
                        </button>
                        <button type="button" class="secondary" disabled={index === rows.length - 1} onClick={() => move(index, 1)} aria-label={`Move ${itemName} ${index + 1} down`}>
                          Down
                        </button>
                      </>
                    )}
                    {rowActions?.(row, list.reload, report)}
                    {mayWrite && editFields && canChange(row) && (
                      <button type="button" class="secondary" onClick={() => edit(row)}>
                        Edit
                      </button>
                    )}
                    {mayWrite && deletable && canChange(row) && (
                      <button type="button" class="danger" onClick={() => remove(row)}>
                        Delete
                      </button>
                    )}
                  </>
                )
              : undefined
          }
        />
      )}
    </section>
  );
}
