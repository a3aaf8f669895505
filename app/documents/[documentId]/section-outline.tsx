"use client";

/**
 * "On this page": links to the document's sections. A long document lists
 * its first sections and offers the rest on request, with a filter by name:
 * a 2,000-entry list is no help to a reader, and every entry would be built,
 * sent and hydrated with the page (bench/README, "The editor in the
 * browser"). The names travel once, as plain strings beside the ids.
 */
import { useDeferredValue, useId, useState } from "react";

/** Sections listed before "Show all". */
const LISTED_AT_FIRST = 30;
/** Matches listed for a filter, at most. */
const LISTED_MATCHES = 100;

export function SectionOutline({ ids, names }: { ids: readonly string[]; names: readonly string[] }) {
  const [showAll, setShowAll] = useState(false);
  const [filter, setFilter] = useState("");
  const deferredFilter = useDeferredValue(filter);
  const filterId = useId();
  const long = ids.length > LISTED_AT_FIRST;
  const wanted = deferredFilter.trim().toLowerCase();
  const indexes = wanted
    ? ids.flatMap((_, i) => (names[i]!.toLowerCase().includes(wanted) ? [i] : [])).slice(0, LISTED_MATCHES)
    : ids.slice(0, showAll ? ids.length : LISTED_AT_FIRST).map((_, i) => i);

  return (
    <nav className="panel" aria-label="Sections">
      <h2 className="panel-title">On this page</h2>
      {long ? (
        <>
          <label className="visually-hidden" htmlFor={filterId}>
            Find a section by name
          </label>
          <input
            id={filterId}
            type="search"
            className="outline-filter"
            placeholder={`Find among ${ids.length.toLocaleString("en")} sections`}
            value={filter}
            onChange={(event) => setFilter(event.target.value)}
          />
        </>
      ) : null}
      {wanted && indexes.length === 0 ? <p className="muted small">No section is named like that.</p> : null}
      <ol className="toc">
        {indexes.map((i) => (
          <li key={ids[i]} value={i + 1}>
            <a href={`#section-${ids[i]}`}>{names[i]}</a>
          </li>
        ))}
      </ol>
      {wanted && indexes.length === LISTED_MATCHES ? <p className="muted small">The first {LISTED_MATCHES} matches.</p> : null}
      {long && !wanted ? (
        <button
          type="button"
          className="button button-small button-quiet outline-more"
          aria-expanded={showAll}
          onClick={() => setShowAll(!showAll)}
        >
          {showAll ? `Show the first ${LISTED_AT_FIRST}` : `Show all ${ids.length.toLocaleString("en")} sections`}
        </button>
      ) : null}
    </nav>
  );
}
