/**
 * People named on a commit or a request (co-authors, and for the history helper agents acting for a person), shown
 * as people: an initials avatar and a name each, the email in the tooltip, never as raw trailer text.
 */
import { initials } from "@/app/_lib/format";
import "./person-names.css";

export interface NamedPerson {
  name: string;
  email?: string;
}

export function PersonNames({ people, label }: { people: readonly NamedPerson[]; label: string }) {
  if (people.length === 0) return null;
  return (
    <ul className="person-names" aria-label={label}>
      {people.map((person) => (
        <li
          key={`${person.name} ${person.email ?? ""}`}
          className="person-name"
          title={person.email ? `${person.name} <${person.email}>` : person.name}
        >
          <span className="avatar avatar-small" aria-hidden="true">
            {initials(person.name)}
          </span>
          <span>{person.name}</span>
        </li>
      ))}
    </ul>
  );
}
