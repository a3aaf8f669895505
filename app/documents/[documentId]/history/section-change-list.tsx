/**
 * What a commit changed, section by section (the `show` action's `changes`): a badge, the section's name and its
 * diff. The history page shows it for the commit selected; a merged request's page for its merge commit.
 */
import { SectionDiff } from "@/app/_components/section-diff";
import type { SectionChange } from "@/server/core/section-changes";
import "./history.css";

const STATUS_LABELS = { added: "Added", deleted: "Deleted", modified: "Modified", moved: "Moved" } as const;

export function SectionChangeList({ changes }: { changes: readonly SectionChange[] }) {
  if (changes.length === 0) {
    return (
      <p className="muted small">
        This commit changed the document itself (its path, name, description, tags or properties), or nothing you can see.
      </p>
    );
  }
  return changes.map((change) => (
    <article key={change.sectionId} className="panel history-change" data-testid="section-change">
      <h3>
        <span className={`badge badge-small change-${change.status}`}>{STATUS_LABELS[change.status]}</span> {change.name}
        {change.moved && change.status === "modified" ? <span className="muted small"> (also moved)</span> : null}
      </h3>
      {change.status === "moved" ? (
        <p className="muted small">Moved to another place among the sections; its content is unchanged.</p>
      ) : (
        <SectionDiff unified={change.diff} view="unified" label={`Changes to ${change.name}`} />
      )}
    </article>
  ));
}

/** "3 sections changed", or that none did. */
export function changeCount(changes: readonly SectionChange[]): string {
  return changes.length === 0 ? "No section changed" : `${changes.length} section${changes.length === 1 ? "" : "s"} changed`;
}
