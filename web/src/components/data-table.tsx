import type { ComponentChildren } from 'preact';
import { formatValue } from './format';

export interface Column<T> {
  /** Field name, or a label of a computed column. */
  key: string;
  label: string;
  render?: (row: T) => ComponentChildren;
}

interface DataTableProps<T> {
  caption: string;
  rows: readonly T[];
  columns: readonly Column<T>[];
  /** Buttons per row (only offered when the user may use them). */
  actions?: (row: T, index: number) => ComponentChildren;
  empty?: string;
  rowKey?: (row: T, index: number) => string;
  /** A class for a row (e.g. the rule a packet test highlights). */
  rowClass?: (row: T) => string | undefined;
}

/** Every list is a table with headers; values are formatted, never printed raw. */
export function DataTable<T extends object>({ caption, rows, columns, actions, empty = 'Nothing here yet.', rowKey, rowClass }: DataTableProps<T>) {
  return (
    <div class="table-wrap">
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th scope="col" key={column.key}>
                {column.label}
              </th>
            ))}
            {actions && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 && (
            <tr>
              <td colSpan={columns.length + (actions ? 1 : 0)} class="empty">
                {empty}
              </td>
            </tr>
          )}
          {rows.map((row, index) => (
            <tr key={rowKey?.(row, index) ?? (row as { id?: string }).id ?? index} class={rowClass?.(row)}>
              {columns.map((column) => (
                <td key={column.key}>{column.render ? column.render(row) : formatValue((row as Record<string, unknown>)[column.key])}</td>
              ))}
              {actions && <td class="actions">{actions(row, index)}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
