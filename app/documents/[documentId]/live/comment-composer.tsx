"use client";

/**
 * Commenting on a selection in a text block: with text selected the editor
 * offers **Comment** (or Ctrl/⌘+Alt+M); the form takes the comment, with `@`
 * completing the people it mentions, and posts it (`comments` `post`): the
 * server stores it at once and anchors it around the selected text in the
 * branch's live draft, so everyone on the page sees the highlight and the
 * thread straight away, and the next commit stores the anchor with the text.
 * The selection is sent as its text and which occurrence of that text in the
 * block it is, which the server finds again in the draft as it is then.
 */
import { useState, type FormEvent } from "react";
import { InlineError } from "@/app/_components/action-form";
import type * as Y from "yjs";
import { commentTagWithin, occurrenceAt } from "@/server/core/comment-markup";
import { type Member, MentionTextarea, mentionedIn } from "./mention-input";
import { useCommentsTool } from "./tools";

export interface TextRange {
  from: number;
  to: number;
}

/** Where comments written in an editor go: the section on its branch, and the block's place in it. */
export interface CommentTarget {
  documentId: string;
  branchName: string;
  sectionId: string;
}

export function CommentComposer({
  text,
  target,
  blockIndex,
  selection,
  open,
  setOpen,
}: {
  text: Y.Text;
  target: CommentTarget;
  blockIndex: number;
  /** The editor's selection now (null when nothing is selected). */
  selection: () => TextRange | null;
  open: boolean;
  setOpen: (open: boolean) => void;
}) {
  const comments = useCommentsTool();
  const [error, setError] = useState<string | null>(null);
  const [body, setBody] = useState("");
  const [picked, setPicked] = useState<Member[]>([]);
  const [busy, setBusy] = useState(false);

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

  const close = () => {
    setBody("");
    setPicked([]);
    setError(null);
    setOpen(false);
  };

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const range = selection();
    if (body.trim() === "") return setError("Write the comment first.");
    if (!range) return setError("Select the text to comment on, then try again.");
    const now = text.toString();
    if (commentTagWithin(now, range.from, range.to)) {
      return setError("A comment cannot overlap another comment: select text outside the highlighted parts.");
    }
    setBusy(true);
    const result = await comments({
      action: "post",
      ...target,
      blockIndex,
      quote: now.slice(range.from, range.to),
      occurrence: occurrenceAt(now, range.from, range.to),
      body,
      mentions: mentionedIn(body, picked),
    });
    setBusy(false);
    if (!result.ok) return setError(result.message);
    close();
  };

  return (
    <form className="comment-composer comment-composer-open" aria-label="New comment" onSubmit={submit} aria-busy={busy}>
      <MentionTextarea
        name="body"
        label="Comment"
        rows={3}
        placeholder="Comment… (@ to mention someone)"
        autoFocus
        value={body}
        onChange={setBody}
        picked={picked}
        onPick={(member) => setPicked((all) => [...all, member])}
      />
      <div className="comment-composer-actions">
        <button type="submit" className="button button-small button-primary" disabled={busy}>
          {busy ? "Posting…" : "Post comment"}
        </button>
        <button type="button" className="button button-small button-quiet" onClick={close}>
          Cancel
        </button>
      </div>
      <InlineError error={error} />
    </form>
  );
}
