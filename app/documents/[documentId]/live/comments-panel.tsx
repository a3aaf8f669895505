"use client";

/**
 * The comment threads of the branch: each comment with the text it is on (a
 * button that brings that text into view in the editor), its author and
 * time, its replies, and a link to its section; a thread whose anchor went
 * with a discarded draft is marked so. Those who may edit the comment's
 * section reply (with `@` completing mentions), resolve and reopen; resolved
 * threads wait behind "Show resolved". The page follows the branch's threads
 * live (the `commentThreads` subscription: the server sends them again on
 * every comment posted, reply, resolution, commit and draft change, from any
 * process), through the reader's own access. On a wide screen the open
 * threads also sit beside their text (comment-margin.tsx); the panel, behind
 * its button, lists them all (on a phone, the only place).
 */
import { useSubscription } from "@trpc/tanstack-react-query";
import { type FormEvent, useEffect, useRef, useState } from "react";
import { InlineError } from "@/app/_components/action-form";
import type { ActionResult } from "@/app/_lib/action-result";
import { refusalOf } from "@/app/_lib/tool-call";
import { useTRPC } from "@/app/_lib/trpc";
import type { ThreadView } from "@/server/actions/comments";
import type { CommentThread } from "@/server/actions/live-views";
import { type ResolvedComments, revealComment } from "./comment-highlights";
import { CommentMargin, useWideScreen } from "./comment-margin";
import { type Member, MentionTextarea, mentionedIn } from "./mention-input";
import { useCommentsTool } from "./tools";

const when = (iso: string) => new Date(iso).toLocaleString("en");

export function CommentsPanel({
  documentId,
  branchName,
  resolvedComments,
}: {
  documentId: string;
  branchName: string;
  resolvedComments: ResolvedComments;
}) {
  const [open, setOpen] = useState(false);
  const [threads, setThreads] = useState<CommentThread[] | null>(null);
  const [showResolved, setShowResolved] = useState(false);
  const [announcement, setAnnouncement] = useState("");
  // Where keyboard focus goes once a resolved or reopened thread has left the list it was in.
  const [focusNext, setFocusNext] = useState<"resolved-toggle" | "heading" | null>(null);
  const resolvedToggle = useRef<HTMLButtonElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    if (focusNext === null) return;
    (focusNext === "resolved-toggle" ? resolvedToggle : heading).current?.focus();
    setFocusNext(null);
  }, [focusNext]);

  // Followed while someone can see the threads: the panel is open, or the screen is wide enough for the margin.
  const wide = useWideScreen();
  const live = useSubscription(useTRPC().commentThreads.subscriptionOptions({ documentId, branchName }, { enabled: open || wide }));
  const error = live.error ? refusalOf(live.error).message : null;
  const loading = open && live.data === undefined && !error;
  useEffect(() => {
    if (!live.data) return;
    setThreads(live.data.threads);
    for (const t of live.data.threads) if (t.commentId) resolvedComments.set(t.commentId, t.status === "resolved");
  }, [live.data, resolvedComments]);

  /**
   * A thread as the server answered a write from this panel, shown at once (focus moves on by it) until the
   * subscription sends the branch's threads again; it keeps the draft's quote and place.
   */
  const changed = (next: ThreadView) => {
    const { status, resolvedByName, resolvedAt, replies } = next;
    setThreads(
      (all) => all?.map((t) => (t.commentId === next.commentId ? { ...t, status, resolvedByName, resolvedAt, replies } : t)) ?? all,
    );
    resolvedComments.set(next.commentId, status === "resolved");
  };
  const resolvedOne = (next: ThreadView) => {
    changed(next);
    setAnnouncement(`Resolved: it is listed under "Show resolved".`);
    // The thread leaves the list of open ones: keep keyboard focus in the panel.
    setFocusNext("resolved-toggle");
  };
  const reopenedOne = (next: ThreadView) => {
    changed(next);
    setAnnouncement("Reopened: it is listed with the open threads.");
    setFocusNext("heading");
  };

  const openThreads = threads?.filter((t) => t.status === "open") ?? [];
  const resolvedThreads = threads?.filter((t) => t.status === "resolved") ?? [];
  const item = (thread: CommentThread, index: number, testId = "comment-thread") => (
    <ThreadItem
      key={thread.commentId ?? `pending-${index}`}
      thread={thread}
      address={{ documentId, branchName }}
      testId={testId}
      onChanged={changed}
      onResolved={resolvedOne}
      onReopened={reopenedOne}
    />
  );
  const besideText = openThreads.filter((t) => t.commentId !== null && t.anchored);

  return (
    <div className="comments-panel">
      <button
        type="button"
        className="button button-small"
        aria-expanded={open}
        aria-controls="comment-threads"
        onClick={() => setOpen(!open)}
      >
        Comments{threads ? ` (${openThreads.length})` : ""}
      </button>
      {besideText.length > 0 ? (
        <CommentMargin threads={besideText} render={(thread, index) => item(thread, index, "comment-margin-thread")} />
      ) : null}
      {open ? (
        <aside id="comment-threads" className="comment-threads" aria-label="Comments" aria-busy={loading}>
          <div className="comment-threads-head">
            <h2 ref={heading} tabIndex={-1}>
              Comments
            </h2>
          </div>
          <p className="visually-hidden" role="status">
            {announcement}
          </p>
          {error ? (
            <p className="inline-error" role="alert">
              {error}
            </p>
          ) : null}
          {threads === null ? (
            error ? null : (
              <p className="muted">Loading comments…</p>
            )
          ) : threads.length === 0 ? (
            <p className="muted">No comments on this branch yet. Select text in a section and choose Comment.</p>
          ) : (
            <>
              {openThreads.length === 0 ? <p className="muted">No open threads: every comment here is resolved.</p> : null}
              <ol className="comment-thread-list">{openThreads.map((t, i) => item(t, i))}</ol>
              {resolvedThreads.length > 0 ? (
                <button
                  ref={resolvedToggle}
                  type="button"
                  className="button button-small button-quiet comment-threads-resolved-toggle"
                  aria-expanded={showResolved}
                  aria-controls="resolved-comment-threads"
                  onClick={() => setShowResolved(!showResolved)}
                >
                  {showResolved ? "Hide" : "Show"} resolved ({resolvedThreads.length})
                </button>
              ) : null}
              {showResolved && resolvedThreads.length > 0 ? (
                <ol id="resolved-comment-threads" className="comment-thread-list" aria-label="Resolved threads">
                  {resolvedThreads.map((t, i) => item(t, i))}
                </ol>
              ) : null}
            </>
          )}
        </aside>
      ) : null}
    </div>
  );
}

type Busy = "reply" | "resolve" | "reopen" | null;

function ThreadItem({
  thread,
  address,
  testId,
  onChanged,
  onResolved,
  onReopened,
}: {
  thread: CommentThread;
  address: { documentId: string; branchName: string };
  testId: string;
  onChanged: (thread: ThreadView) => void;
  onResolved: (thread: ThreadView) => void;
  onReopened: (thread: ThreadView) => void;
}) {
  const comments = useCommentsTool();
  const [busy, setBusy] = useState<Busy>(null);
  const [error, setError] = useState<string | null>(null);
  const [draft, setDraft] = useState("");
  const [picked, setPicked] = useState<Member[]>([]);
  const { commentId } = thread;
  const resolved = thread.status === "resolved";

  /** Runs one write; the thread the server answers replaces this one. */
  const run = async (what: Exclude<Busy, null>, call: () => Promise<ActionResult<{ thread: ThreadView }>>): Promise<ThreadView | null> => {
    setBusy(what);
    setError(null);
    const result = await call();
    setBusy(null);
    if (!result.ok) {
      setError(result.message);
      return null;
    }
    return result.value.thread;
  };

  const reply = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const body = draft.trim();
    if (body === "") return setError("Write the reply first.");
    if (!commentId) return;
    const next = await run("reply", () => comments({ action: "reply", ...address, commentId, body, mentions: mentionedIn(body, picked) }));
    if (!next) return;
    setDraft("");
    setPicked([]);
    onChanged(next);
  };
  const setResolved = async (value: boolean) => {
    if (!commentId) return;
    const next = await run(value ? "resolve" : "reopen", () => comments({ action: value ? "resolve" : "reopen", ...address, commentId }));
    if (next) (value ? onResolved : onReopened)(next);
  };

  return (
    <li className={`comment-thread${resolved ? " comment-thread-resolved" : ""}`} data-testid={testId} aria-busy={busy !== null}>
      <a href={`#section-${thread.sectionId}`} className="comment-thread-section">
        {thread.sectionName}
      </a>
      <blockquote>
        {commentId && thread.anchored ? (
          <button
            type="button"
            className="comment-thread-quote"
            title="Show in the document"
            onClick={() => revealComment(thread.sectionId, commentId, thread.text)}
          >
            {thread.text}
            <span className="visually-hidden"> (show in the document)</span>
          </button>
        ) : thread.anchored ? (
          thread.text
        ) : (
          <span className="muted">The text it was on went with a discarded draft.</span>
        )}
      </blockquote>
      <p>{thread.body}</p>
      <p className="muted comment-thread-meta">
        {thread.pending ? (
          <>
            {thread.authorName ? <>{thread.authorName} · </> : null}
            <span className="badge">Not committed yet</span>
          </>
        ) : (
          <>
            {thread.authorName ?? "Someone"}
            {thread.createdAt ? <> · {when(thread.createdAt)}</> : null}
            {thread.anchored ? null : (
              <>
                {" "}
                · <span className="badge">Detached</span>
              </>
            )}
          </>
        )}
      </p>
      {thread.replies.length > 0 ? (
        <ol className="comment-replies" aria-label="Replies">
          {thread.replies.map((r) => (
            <li key={r.replyId} data-testid="comment-reply">
              <p>{r.body}</p>
              <p className="muted comment-thread-meta">
                {r.authorName ?? "Someone"} · {when(r.createdAt)}
              </p>
            </li>
          ))}
        </ol>
      ) : null}
      {resolved ? (
        <p className="muted comment-thread-meta">
          Resolved by {thread.resolvedByName ?? "someone"}
          {thread.resolvedAt ? <> · {when(thread.resolvedAt)}</> : null}
        </p>
      ) : null}
      {commentId && thread.canWrite ? (
        resolved ? (
          <div className="comment-thread-actions">
            <button type="button" className="button button-small" disabled={busy !== null} onClick={() => void setResolved(false)}>
              {busy === "reopen" ? "Reopening…" : "Reopen"}
            </button>
          </div>
        ) : (
          <form className="comment-reply-form" aria-label="Reply" onSubmit={reply}>
            <MentionTextarea
              name="body"
              label="Reply"
              rows={2}
              placeholder="Reply… (@ to mention someone)"
              disabled={busy !== null}
              value={draft}
              onChange={setDraft}
              picked={picked}
              onPick={(member) => setPicked((all) => [...all, member])}
            />
            <div className="comment-thread-actions">
              <button type="submit" className="button button-small button-primary" disabled={busy !== null}>
                {busy === "reply" ? "Replying…" : "Reply"}
              </button>
              <button type="button" className="button button-small" disabled={busy !== null} onClick={() => void setResolved(true)}>
                {busy === "resolve" ? "Resolving…" : "Resolve"}
              </button>
            </div>
          </form>
        )
      ) : null}
      <InlineError error={error} />
    </li>
  );
}
