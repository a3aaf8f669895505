"use client";

/**
 * The comment threads of the branch, beside the document: each comment with
 * the text it is on, its author and time, and a link to its section; comments
 * typed into the draft and not committed yet are marked so. Loaded when
 * opened (and again on request), through the reader's own access.
 */
import { useCallback, useEffect, useState } from "react";
import { type CommentThread, readCommentThreads } from "./comment-actions";

export function CommentsPanel({ documentId, branchName }: { documentId: string; branchName: string }) {
  const [open, setOpen] = useState(false);
  const [threads, setThreads] = useState<CommentThread[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async () => {
    const result = await readCommentThreads({ documentId, branchName });
    if (result.ok) {
      setThreads(result.value);
      setError(null);
    } else setError(result.message);
  }, [documentId, branchName]);

  useEffect(() => {
    if (open) void load();
  }, [open, load]);

  return (
    <div className="comments-panel">
      <button
        type="button"
        className="button button-small"
        aria-expanded={open}
        aria-controls="comment-threads"
        onClick={() => setOpen(!open)}
      >
        Comments{threads ? ` (${threads.length})` : ""}
      </button>
      {open ? (
        <aside id="comment-threads" className="comment-threads" aria-label="Comments">
          <div className="comment-threads-head">
            <h2>Comments</h2>
            <button type="button" className="button button-small button-quiet" onClick={() => void load()}>
              Refresh
            </button>
          </div>
          {error ? (
            <p className="inline-error" role="alert">
              {error}
            </p>
          ) : threads === null ? (
            <p className="muted">Loading comments…</p>
          ) : threads.length === 0 ? (
            <p className="muted">No comments on this branch yet. Select text in a section and choose Comment.</p>
          ) : (
            <ol className="comment-thread-list">
              {threads.map((thread, index) => (
                <li key={thread.commentId ?? `pending-${index}`} className="comment-thread" data-testid="comment-thread">
                  <a href={`#section-${thread.sectionId}`} className="comment-thread-section">
                    {thread.sectionName}
                  </a>
                  <blockquote>{thread.text}</blockquote>
                  <p>{thread.body}</p>
                  <p className="muted comment-thread-meta">
                    {thread.pending ? (
                      <span className="badge">Not committed yet</span>
                    ) : (
                      <>
                        {thread.authorName ?? "Someone"}
                        {thread.createdAt ? <> · {new Date(thread.createdAt).toLocaleString("en")}</> : null}
                      </>
                    )}
                  </p>
                </li>
              ))}
            </ol>
          )}
        </aside>
      ) : null}
    </div>
  );
}
