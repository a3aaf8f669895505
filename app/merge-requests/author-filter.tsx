"use client";

import { useRef, useState } from "react";
import { flushSync } from "react-dom";
import { MemberSearch } from "@/app/_components/member-picker";
import type { WorkspacePerson } from "@/app/_lib/quire";

const WHOSE = ["anyone", "me", "someone"] as const;
type Whose = (typeof WHOSE)[number];

/**
 * The list's Author filter: anyone, me, or someone else found by typing (any member, however many there are).
 * The person found takes the place of "Someone else…" in the select, so the filter reads as whom it is on; the
 * GET form sends the choice as `author=<userId>` through the hidden field (the visible ones have no name).
 */
export function AuthorFilter({ me, filtered }: { me: string; filtered: WorkspacePerson | null }) {
  const [whose, setWhose] = useState<Whose>(filtered === null ? "anyone" : filtered.userId === me ? "me" : "someone");
  const [someone, setSomeone] = useState(filtered?.userId === me ? null : filtered);
  const search = useRef<HTMLInputElement>(null);
  const author = whose === "me" ? me : whose === "someone" ? (someone?.userId ?? "") : "";

  return (
    <>
      <input type="hidden" name="author" value={author} />
      <label className="field">
        <span>Author</span>
        <select
          value={whose}
          onChange={(event) => {
            const chosen = WHOSE.find((w) => w === event.target.value) ?? "anyone";
            // Rendered at once, so the search field that "Someone else…" brings is there to take the typing.
            flushSync(() => setWhose(chosen));
            if (chosen === "someone") search.current?.focus();
          }}
        >
          <option value="anyone">Anyone</option>
          <option value="me">Me</option>
          <option value="someone">{someone ? someone.name : "Someone else…"}</option>
        </select>
      </label>
      {whose === "someone" ? (
        <MemberSearch
          id="author-search"
          label="Find the author"
          verb="Choose"
          leaveOut={someone ? [someone.userId] : []}
          onPick={(member) => setSomeone({ userId: member.userId, name: member.name })}
          inputRef={search}
        />
      ) : null}
    </>
  );
}
