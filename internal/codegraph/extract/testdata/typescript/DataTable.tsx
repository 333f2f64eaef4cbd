import React, { forwardRef, useMemo, useReducer, type ReactNode } from 'react';
import clsx from 'clsx';
import { Table, Pagination } from '@acme/ui';
import type { Column, SortState } from './types';
import './DataTable.css';

export interface DataTableProps<T> {
  rows: T[];
  columns: Column<T>[];
  pageSize?: number;
  renderEmpty?: () => ReactNode;
  onSort?(state: SortState): void;
}

type Action = { type: 'sort'; key: string } | { type: 'page'; page: number };

interface State {
  sort: SortState;
  page: number;
}

function reducer(state: State, action: Action): State {
  switch (action.type) {
    case 'sort':
      return { ...state, sort: toggleSort(state.sort, action.key) };
    case 'page':
      return { ...state, page: action.page };
  }
}

const toggleSort = (sort: SortState, key: string): SortState =>
  sort.key === key ? { key, dir: sort.dir === 'asc' ? 'desc' : 'asc' } : { key, dir: 'asc' };

export function DataTable<T extends { id: string }>({ rows, columns, pageSize = 20, renderEmpty, onSort }: DataTableProps<T>) {
  const [state, dispatch] = useReducer(reducer, { sort: { key: 'id', dir: 'asc' }, page: 0 });

  const sorted = useMemo(() => sortRows(rows, state.sort), [rows, state.sort]);

  function handleSort(key: string) {
    dispatch({ type: 'sort', key });
    onSort?.(state.sort);
  }

  if (rows.length === 0) {
    return <>{renderEmpty?.() ?? <EmptyState />}</>;
  }

  return (
    <Table className={clsx('data-table', { sorted: state.sort.key })}>
      <Table.Head>
        {columns.map((col) => (
          <HeaderCell key={col.key} column={col} onClick={() => handleSort(col.key)} />
        ))}
      </Table.Head>
      <Table.Body>
        {sorted.slice(state.page * pageSize, (state.page + 1) * pageSize).map((row) => (
          <Row<T> key={row.id} row={row} columns={columns} />
        ))}
      </Table.Body>
      <Pagination
        page={state.page}
        onChange={(page: number) => dispatch({ type: 'page', page })}
      />
    </Table>
  );
}

const HeaderCell = <T,>({ column, onClick }: { column: Column<T>; onClick: () => void }) => (
  <th onClick={onClick}>{column.title}</th>
);

function Row<T>({ row, columns }: { row: T; columns: Column<T>[] }) {
  return (
    <tr>
      {columns.map((c) => (
        <td key={c.key}>{c.render ? c.render(row) : String(row[c.key as keyof T])}</td>
      ))}
    </tr>
  );
}

export const EmptyState: React.FC = () => <p className="empty">No rows</p>;

// forwardRef's render function is a callback: not a definition.
export const SearchBox = forwardRef<HTMLInputElement, { onSearch(q: string): void }>((props, ref) => (
  <input ref={ref} onChange={(e) => props.onSearch(e.target.value)} />
));

export class ErrorBoundary extends React.Component<{ children: ReactNode }, { failed: boolean }> {
  state = { failed: false };

  static getDerivedStateFromError(): { failed: boolean } {
    return { failed: true };
  }

  componentDidCatch(error: Error): void {
    reportError(error);
  }

  render() {
    return this.state.failed ? <EmptyState /> : this.props.children;
  }
}

function sortRows<T>(rows: T[], sort: SortState): T[] {
  const dir = sort.dir === 'asc' ? 1 : -1;
  return [...rows].sort((a: any, b: any) => (a[sort.key] > b[sort.key] ? dir : -dir));
}
