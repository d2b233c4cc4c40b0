import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import type { Row } from '../api/types';
import type { Query } from '../api/client';
import { DataTable, type Column } from './data-table';
import { ErrorAlert, messageOf } from './error-alert';
import { RecordForm, type FieldSpec } from './record-form';
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
  /** Delete button per row (DELETE `path/{id}`). */
  deletable?: boolean;
  /** The name a delete confirmation shows. */
  describe?: (row: Row) => string;
  /** Extra per-row buttons, given a reload for after they act. */
  rowActions?: (row: Row, reload: () => void) => ComponentChildren;
  empty?: string;
  /** Lists that are not bare arrays (e.g. `{entries: [...]}`): how to find the rows. */
  pick?: (data: unknown) => Row[];
  /** Re-read the list this often (live state, e.g. gateways). */
  refreshMs?: number;
}

const asRows = (data: unknown): Row[] => (Array.isArray(data) ? (data as Row[]) : []);

/** A declared collection of the API as a table, with create and delete when the user may write. */
export function CollectionSection(props: CollectionSectionProps) {
  const { api, can } = useSession();
  const { title, path, query, columns, writePermission, createFields, itemName = 'record', deletable, describe, rowActions, empty, pick = asRows, refreshMs } = props;
  const mayWrite = writePermission ? can(writePermission) : false;
  const list = useLoad(() => api.request<unknown>('GET', path, { query }), `${path}?${JSON.stringify(query ?? {})}`);
  const [creating, setCreating] = useState(false);
  useEffect(() => {
    if (!refreshMs) return undefined;
    const timer = setInterval(list.reload, refreshMs);
    return () => clearInterval(timer);
  }, [refreshMs, list.reload]);
  const [actionError, setActionError] = useState<string | null>(null);
  const rows = list.data ? pick(list.data.data) : [];

  const remove = async (row: Row) => {
    const name = describe?.(row) ?? String(row.name ?? row.id);
    if (!confirm(`Delete ${name}?`)) return;
    setActionError(null);
    try {
      await api.delete(`${path}/${encodeURIComponent(String(row.id))}`);
      list.reload();
    } catch (failure) {
      setActionError(messageOf(failure));
    }
  };

  const showActions = (mayWrite && deletable) || rowActions;
  return (
    <section class="panel" aria-label={title}>
      <header class="panel-head">
        <h2>{title}</h2>
        <span class="count">{list.data ? `${list.data.total ?? rows.length} total` : ''}</span>
        {mayWrite && createFields && !creating && (
          <button type="button" onClick={() => setCreating(true)}>
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
      <ErrorAlert message={list.error ?? actionError} />
      {!list.error && (
        <DataTable
          caption={title}
          rows={rows}
          columns={columns}
          empty={list.loading && !list.data ? 'Loading…' : empty}
          actions={
            showActions
              ? (row) => (
                  <>
                    {rowActions?.(row, list.reload)}
                    {mayWrite && deletable && (
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
