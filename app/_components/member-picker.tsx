"use client";

/**
 * Finding workspace members by typing, in a workspace of any size: the server's `members` search (start of a name,
 * of a word of it, or of an email) once typing rests, never a filter over a first page of members.
 * `useMemberSearch` is the lookup (the `@` completion of comment boxes uses it too), `MemberSearch` a labelled
 * search field with its matches to pick from, `MemberPicker` that field with the chosen people as removable chips.
 */
import { useQuery } from "@tanstack/react-query";
import { type KeyboardEvent, type Ref, useEffect, useState } from "react";
import type { WorkspacePerson } from "@/app/_lib/quire";
import { useTRPC } from "@/app/_lib/trpc";
import type { MemberView } from "@/server/actions/members";
import "./member-picker.css";

/** How long typing rests before what was typed is looked up. */
const SEARCH_DEBOUNCE_MS = 150;
/** The most matches offered at once: more typing narrows them. */
const SHOWN = 8;

/** The members matching a text, or why they could not be found; null while there is nothing to show for this text. */
export type MemberSearchAnswer = { members: MemberView[] } | { failed: string } | null;

/**
 * The members `typed` finds (null: look nothing up), once typing has rested. An answer is only ever the one for
 * exactly this text: while a newer text waits for its answer this is null, never the older text's matches.
 * An empty text asks for nothing, unless `listWhenEmpty`: then the first members by name.
 */
export function useMemberSearch(typed: string | null, options: { limit: number; listWhenEmpty?: boolean }): MemberSearchAnswer {
  const wanted = typed?.trim() ?? null;
  const [rested, setRested] = useState(wanted);
  // A typing debounce, not polling: the lookup runs once the text has rested.
  useEffect(() => {
    const timer = setTimeout(() => setRested(wanted), SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [wanted]);
  const asking = rested !== null && (rested !== "" || options.listWhenEmpty === true);
  const input = rested
    ? { action: "search" as const, query: rested, limit: options.limit }
    : { action: "list" as const, limit: options.limit };
  const lookup = useQuery(useTRPC().members.queryOptions(input, { enabled: asking }));
  if (!asking || rested !== wanted) return null;
  if (lookup.error) return { failed: lookup.error.message };
  return lookup.data ? { members: lookup.data.members } : null;
}

/**
 * A labelled search field whose matches drop down under it as buttons named `<verb> <name> <email>`. Picking one clears
 * the field; Enter picks the first match and never submits the surrounding form (half a name is no answer to it);
 * Escape clears the field. The field has no `name`: the form sends what its owner makes of the picks.
 */
export function MemberSearch({
  id,
  label,
  verb,
  leaveOut = [],
  leftOutNote = () => "Everyone it matches is chosen already.",
  onPick,
  inputRef,
}: {
  id: string;
  label: string;
  /** What picking does, as the start of each match's button: "Add", "Choose". */
  verb: string;
  /** People not to offer (those already chosen). */
  leaveOut?: readonly string[];
  /** What to say when everyone the text matches is left out; by default that they are chosen already. */
  leftOutNote?: (leftOut: readonly MemberView[]) => string;
  onPick: (member: MemberView) => void;
  inputRef?: Ref<HTMLInputElement>;
}) {
  const [query, setQuery] = useState("");
  const answer = useMemberSearch(query, { limit: SHOWN });
  const matches = answer && "members" in answer ? answer.members.filter((m) => !leaveOut.includes(m.userId)) : [];

  const pick = (member: MemberView) => {
    onPick(member);
    setQuery("");
  };
  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === "Enter") {
      event.preventDefault();
      if (matches[0]) pick(matches[0]);
    } else if (event.key === "Escape" && query !== "") {
      // Clears this field only (a surrounding dialog keeps its own Escape for a second press).
      event.preventDefault();
      event.stopPropagation();
      setQuery("");
    }
  };

  return (
    <div className="field member-search">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        ref={inputRef}
        type="search"
        value={query}
        onChange={(e) => setQuery(e.target.value)}
        onKeyDown={onKeyDown}
        placeholder="Type a name or email"
        autoComplete="off"
      />
      {answer === null ? null : (
        <div className="member-search-results">
          {"failed" in answer ? (
            <p className="form-error" role="alert">
              Could not search the members: {answer.failed}
            </p>
          ) : matches.length > 0 ? (
            <ul aria-label="Matching members">
              {matches.map((m) => (
                <li key={m.userId}>
                  <button type="button" className="member-search-match" onClick={() => pick(m)}>
                    {/* The verb is for the button's name, which says what it does; the eye reads it from the field. */}
                    <span className="visually-hidden">{verb} </span>
                    <span className="member-search-name">{m.name}</span> <span className="muted">{m.email}</span>
                  </button>
                </li>
              ))}
            </ul>
          ) : (
            <p className="muted small" role="status">
              {answer.members.length > 0 ? leftOutNote(answer.members) : `No member matches “${query.trim()}”.`}
            </p>
          )}
        </div>
      )}
    </div>
  );
}

/** A MemberSearch that gathers several people, shown as chips with a remove button each. */
export function MemberPicker({
  id,
  label,
  chosenLabel,
  chosen,
  onChange,
  author,
}: {
  id: string;
  label: string;
  /** The accessible name of the chips' list, such as "Chosen reviewers". */
  chosenLabel: string;
  chosen: readonly WorkspacePerson[];
  onChange: (chosen: WorkspacePerson[]) => void;
  /** The signed-in person opening what the chosen review: never offered (nobody reviews their own request). */
  author?: string;
}) {
  const chosenIds = chosen.map((person) => person.userId);
  return (
    <div className="member-picker">
      <MemberSearch
        id={id}
        label={label}
        verb="Add"
        leaveOut={author ? [author, ...chosenIds] : chosenIds}
        leftOutNote={(leftOut) =>
          leftOut.every((member) => member.userId === author)
            ? "That is you: nobody reviews their own request."
            : "Everyone it matches is chosen already."
        }
        onPick={(member) => onChange([...chosen, { userId: member.userId, name: member.name }])}
      />
      {chosen.length > 0 ? (
        <ul className="member-picker-chosen" aria-label={chosenLabel}>
          {chosen.map((person) => (
            <li key={person.userId} className="badge">
              {person.name}{" "}
              <button
                type="button"
                className="member-picker-remove"
                aria-label={`Remove ${person.name}`}
                onClick={() => onChange(chosen.filter((other) => other.userId !== person.userId))}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** A request's reviewers (a merge request, a changeset): never its author, the signed-in person opening it. */
export function ReviewerPicker({
  author,
  chosen,
  onChange,
}: {
  author: string;
  chosen: readonly WorkspacePerson[];
  onChange: (chosen: WorkspacePerson[]) => void;
}) {
  return (
    <MemberPicker
      id="reviewer-search"
      label="Reviewers"
      chosenLabel="Chosen reviewers"
      chosen={chosen}
      onChange={onChange}
      author={author}
    />
  );
}
