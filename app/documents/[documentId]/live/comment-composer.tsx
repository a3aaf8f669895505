"use client";

/**
 * Commenting on a selection in a text block: with text selected the editor
 * offers **Comment** (or Ctrl/⌘+Alt+M); the form takes the comment and whom
 * it mentions, and wraps the selection in the shared text with
 * `<svc:comment-new …>` tags, which name its author (the server refuses a
 * comment typed in someone else's name). Everyone in the room sees it
 * highlighted at once; the commit stores it as a comment by that author,
 * whoever commits (spec §2.3).
 */
import { useQuery } from "@tanstack/react-query";
import { InlineError } from "@/app/_components/action-form";
import { refusalOf } from "@/app/_lib/tool-call";
import { useTRPC } from "@/app/_lib/trpc";
import { useState, type FormEvent } from "react";
import type * as Y from "yjs";
import { commentTagWithin, MAX_COMMENT_BODY_CHARS, newCommentMarkup } from "@/server/core/comment-markup";

export interface TextRange {
  from: number;
  to: number;
}

export function CommentComposer({
  text,
  authorId,
  selection,
  open,
  setOpen,
}: {
  text: Y.Text;
  /** The signed-in person, written into the comment as its author. */
  authorId: string;
  /** The editor's selection now (null when nothing is selected). */
  selection: () => TextRange | null;
  open: boolean;
  setOpen: (open: boolean) => void;
}) {
  const [error, setError] = useState<string | null>(null);
  // Everyone in the workspace (the first 200), asked for when the form first opens.
  const members = useQuery({ ...useTRPC().members.queryOptions({ action: "list", limit: 200 }), enabled: open });
  const people = members.data?.members ?? null;
  const shownError = error ?? (members.error ? refusalOf(members.error).message : null);

  if (!open) {
    return (
      <div className="comment-composer">
        <button
          type="button"
          className="button button-small button-quiet"
          aria-keyshortcuts="Control+Alt+M Meta+Alt+M"
          title="Comment on the selection (Ctrl/⌘ + Alt + M)"
          onMouseDown={(event) => event.preventDefault()}
          onClick={() => setOpen(true)}
        >
          Comment
        </button>
      </div>
    );
  }

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const body = String(data.get("body") ?? "").trim();
    const range = selection();
    if (body === "") return setError("Write the comment first.");
    if (!range) return setError("Select the text to comment on, then try again.");
    if (commentTagWithin(text.toString(), range.from, range.to)) {
      return setError("A comment cannot overlap another comment: select text outside the highlighted parts.");
    }
    const { open: openTag, close } = newCommentMarkup(body, data.getAll("mentions").map(String), authorId);
    // The closing tag first, so the selection's start is still where it was.
    text.doc?.transact(() => {
      text.insert(range.to, close);
      text.insert(range.from, openTag);
    });
    setError(null);
    setOpen(false);
  };

  return (
    <form className="comment-composer comment-composer-open" aria-label="New comment" onSubmit={submit}>
      <label className="comment-composer-body">
        <span>Comment</span>
        {/* biome-ignore lint/a11y/noAutofocus: the form opens on request, and writing the comment is the next step */}
        <textarea name="body" required maxLength={MAX_COMMENT_BODY_CHARS} rows={3} autoFocus />
      </label>
      <fieldset className="comment-composer-mentions">
        <legend>Mention</legend>
        {people === null ? (
          <p className="muted">Loading people…</p>
        ) : (
          people.map((person) => (
            <label key={person.userId}>
              <input type="checkbox" name="mentions" value={person.userId} /> {person.name}
            </label>
          ))
        )}
      </fieldset>
      <div className="comment-composer-actions">
        <button type="submit" className="button button-small button-primary">
          Add comment
        </button>
        <button type="button" className="button button-small button-quiet" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
      <InlineError error={shownError} />
    </form>
  );
}
