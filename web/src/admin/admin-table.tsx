import type { ComponentChildren } from 'preact';

interface Props {
  caption: string;
  columns: string[];
  /** An unnamed last column for each row's buttons. */
  actions?: boolean;
  /** Names the wrapper as a region the keyboard can scroll, for a table wider than a phone. */
  scrollLabel?: string;
  class?: string;
  children: ComponentChildren;
}

/** An admin table: its caption for screen readers, its column headings, its rows. */
export function AdminTable({ caption, columns, actions, scrollLabel, class: className, children }: Props) {
  return (
    <div class="admin-table-wrap" {...(scrollLabel ? { tabIndex: 0, role: 'region', 'aria-label': scrollLabel } : {})}>
      <table class={`admin-table${className ? ` ${className}` : ''}`}>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
            {actions && (
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
