"use client";

import { useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { type FormEvent, useEffect, useState } from "react";
import { FormError, field, optionalField } from "@/app/_components/action-form";
import { useMergeRequestsTool } from "@/app/_lib/tool-call";
import { useTRPC } from "@/app/_lib/trpc";
import type { MemberList } from "@/server/actions/members";

type PickedMember = MemberList["members"][number];

/** How long typing in the reviewer search rests before it is looked up. */
const SEARCH_DEBOUNCE_MS = 150;

export function CreateForm({
  documentId,
  branches,
  source,
  target,
  suggestedTitle,
  incoming,
}: {
  documentId: string;
  branches: string[];
  source: string;
  target: string;
  suggestedTitle: string;
  /** What the source brings the target: its commits the target lacks, or why that could not be told. */
  incoming: { commits: number } | { unread: string };
}) {
  const router = useRouter();
  const trpc = useTRPC();
  const mergeRequests = useMergeRequestsTool();
  const [query, setQuery] = useState("");
  const [searched, setSearched] = useState("");
  const [reviewers, setReviewers] = useState<PickedMember[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);

  // A typing debounce, not polling: the search runs once the query has rested.
  useEffect(() => {
    const timer = setTimeout(() => setSearched(query.trim()), SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [query]);
  const search = useQuery(trpc.members.queryOptions({ action: "search", query: searched, limit: 8 }, { enabled: searched !== "" }));
  const found = query.trim() !== "" && search.data ? search.data.members : [];

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setPending(true);
    const result = await mergeRequests({
      action: "create",
      documentId,
      sourceBranch: field(form, "source"),
      targetBranch: field(form, "target"),
      title: field(form, "title"),
      description: optionalField(form, "description"),
      reviewerIds: reviewers.map((r) => r.userId),
    });
    setPending(false);
    if (!result.ok) return setError(result.message);
    router.push(`/merge-requests/${result.value.mergeRequestId}`);
  }

  /** Changing a branch reloads the page, which recomputes the title suggestion and what the source brings. */
  function pickBranches(form: HTMLFormElement) {
    const data = new FormData(form);
    const params = new URLSearchParams({ documentId, source: String(data.get("source")), target: String(data.get("target")) });
    router.replace(`/merge-requests/new?${params}`);
  }

  const empty = source === target || ("commits" in incoming && incoming.commits === 0);
  return (
    <form className="panel form mr-create" onSubmit={onSubmit} aria-label="New merge request">
      <div className="mr-create-branches">
        <label className="field">
          <span>Source branch</span>
          <select name="source" defaultValue={source} onChange={(e) => pickBranches(e.currentTarget.form!)}>
            {branches.map((b) => (
              <option key={b}>{b}</option>
            ))}
          </select>
        </label>
        <span aria-hidden="true">→</span>
        <label className="field">
          <span>Target branch</span>
          <select name="target" defaultValue={target} onChange={(e) => pickBranches(e.currentTarget.form!)}>
            {branches.map((b) => (
              <option key={b}>{b}</option>
            ))}
          </select>
        </label>
      </div>
      {empty ? (
        <p className="banner banner-warning" role="status" data-testid="empty-request">
          {source === target
            ? "Source and target are the same branch: a merge request brings one branch into another."
            : `Nothing to merge: ${target} already has every commit of ${source}. Commit to ${source} first, then open the request.`}
        </p>
      ) : "unread" in incoming ? (
        <p className="banner banner-warning" role="alert" data-testid="incoming-unread">
          {incoming.unread}
        </p>
      ) : (
        <p className="muted small">
          {incoming.commits} commit{incoming.commits === 1 ? "" : "s"} on {source} that {target} does not have.
        </p>
      )}
      <label className="field">
        <span>Title</span>
        <input name="title" defaultValue={suggestedTitle} key={suggestedTitle} required maxLength={300} />
      </label>
      <label className="field">
        <span>Description (markdown)</span>
        <textarea name="description" rows={5} />
      </label>
      <div className="field">
        <label htmlFor="reviewer-search">Reviewers</label>
        <input
          id="reviewer-search"
          type="search"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          placeholder="Type a name or email"
          autoComplete="off"
        />
        {found.length > 0 ? (
          <ul className="mr-picker" aria-label="Matching members">
            {found
              .filter((m) => !reviewers.some((r) => r.userId === m.userId))
              .map((m) => (
                <li key={m.userId}>
                  <button
                    type="button"
                    className="button button-small button-quiet"
                    onClick={() => {
                      setReviewers((all) => [...all, m]);
                      setQuery("");
                    }}
                  >
                    Add {m.name} <span className="muted">{m.email}</span>
                  </button>
                </li>
              ))}
          </ul>
        ) : null}
        {reviewers.length > 0 ? (
          <ul className="mr-chosen" aria-label="Chosen reviewers">
            {reviewers.map((r) => (
              <li key={r.userId} className="badge">
                {r.name}{" "}
                <button
                  type="button"
                  className="mr-chip-remove"
                  aria-label={`Remove ${r.name}`}
                  onClick={() => setReviewers((all) => all.filter((x) => x.userId !== r.userId))}
                >
                  ×
                </button>
              </li>
            ))}
          </ul>
        ) : null}
      </div>
      <FormError error={error} spaced={false} />
      <div className="button-row">
        <button type="submit" className="button button-primary" disabled={empty || pending}>
          {pending ? "Opening…" : "Open merge request"}
        </button>
      </div>
    </form>
  );
}
