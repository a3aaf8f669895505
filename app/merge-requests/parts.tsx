/** Small pieces the merge request list and detail pages share. */
import type { MergeRequestView } from "@/app/_lib/quire";

const STATE_LABELS = { pending: "Pending", approved: "Approved", changes_requested: "Changes requested" } as const;

export function StatusBadge({ status }: { status: MergeRequestView["status"] }) {
  return <span className={`mr-status mr-status-${status}`}>{status === "open" ? "Open" : status === "merged" ? "Merged" : "Closed"}</span>;
}

type Reviewer = MergeRequestView["reviewers"][number];

/** A review given with an API token is an agent's: shown, never counted. */
const isAgentsReview = (reviewer: Reviewer) => reviewer.reviewedAs === "agent";

export function reviewerLabel(reviewer: Reviewer): string {
  if (isAgentsReview(reviewer)) return `${STATE_LABELS[reviewer.state]} by ${reviewer.agentName ?? "an agent"} (does not count)`;
  return reviewer.stale ? "Approval stale" : STATE_LABELS[reviewer.state];
}

/** Each reviewer with their state; a stale approval and an agent's review say so. */
export function ReviewerStates({ request }: { request: MergeRequestView }) {
  if (request.reviewers.length === 0) return <p className="muted small mr-reviewers">No reviewers</p>;
  return (
    <ul className="mr-reviewers" aria-label="Reviewers">
      {request.reviewers.map((r) => (
        <li
          key={r.userId}
          className={`mr-reviewer mr-reviewer-${isAgentsReview(r) ? "agent" : r.stale ? "stale" : r.state}`}
          data-testid="reviewer-state"
        >
          <span className="mr-reviewer-name">{r.name}</span> <span className="mr-reviewer-state">{reviewerLabel(r)}</span>
        </li>
      ))}
    </ul>
  );
}
