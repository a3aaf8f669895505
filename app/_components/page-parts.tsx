/** Layout pieces shared by the settings pages and the "Share & permissions" page (styled in settings.css). */
import type { ReactNode } from "react";
import { initials } from "@/app/_lib/format";

/** A page's title and one-line description, with an optional action on the right. */
export function PageHeading({ title, description, action }: { title: ReactNode; description: ReactNode; action?: ReactNode }) {
  return (
    <div className="page-heading">
      <div>
        <h1>{title}</h1>
        <p className="muted">{description}</p>
      </div>
      {action}
    </div>
  );
}

/** A titled section of a settings-style page; `id` names its heading. */
export function SettingsSection({
  id,
  title,
  description,
  children,
}: {
  id: string;
  title: string;
  description: ReactNode;
  children: ReactNode;
}) {
  return (
    <section className="settings-section" aria-labelledby={id}>
      <div className="settings-section-heading">
        <h2 id={id}>{title}</h2>
        <p className="muted small">{description}</p>
      </div>
      {children}
    </section>
  );
}

/** A table with a header row of `columns` and, with `actions`, a last column for row buttons. */
export function DataTable({
  testId,
  columns,
  actions = true,
  children,
}: {
  testId: string;
  columns: string[];
  actions?: boolean;
  children: ReactNode;
}) {
  return (
    <table className="data-table" data-testid={testId}>
      <thead>
        <tr>
          {columns.map((column) => (
            <th key={column} scope="col">
              {column}
            </th>
          ))}
          {actions ? (
            <th scope="col" className="cell-actions">
              <span className="visually-hidden">Actions</span>
            </th>
          ) : null}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}

/** A person in a table: avatar, name (with a "you" badge and any others), and an email line. */
export function Person({ name, email, isYou, children }: { name: string; email: ReactNode; isYou: boolean; children?: ReactNode }) {
  return (
    <div className="person">
      <span className="avatar" aria-hidden="true">
        {initials(name)}
      </span>
      <div className="person-text">
        <span className="person-name">
          {name}
          {isYou ? <span className="badge badge-small">you</span> : null}
          {children}
        </span>
        <span className="person-email">{email}</span>
      </div>
    </div>
  );
}
