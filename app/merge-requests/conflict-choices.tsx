"use client";

/**
 * The choices a merge needs where both branches changed the same thing, as
 * one piece for the two pages that merge: a merge request's review and a
 * changeset (which merges one request per document). Each page lays the
 * choices out its own way; what a choice looks like, what is still missing
 * and what `execute` is sent are the same.
 */
import type { MergeAnalysisView } from "@/app/_lib/quire";

/** One side of a conflicting section as the page read it: its text, its deletion on that branch, or why it could not be read. */
export type ConflictSide = { kind: "text"; text: string } | { kind: "deleted" } | { kind: "unread"; message: string };

/** Per conflicting section: what the source and the target hold. */
export type ConflictSides = Record<string, { source: ConflictSide; target: ConflictSide }>;

export const NOT_READ: ConflictSide = { kind: "unread", message: "The page did not read this section." };

/** What the merge keeps of a conflicting section: one side, or a text written here. */
export type SectionChoice = { resolution: "source" | "target" } | { resolution: "merged"; text: string };

/** One document's choices: each conflicting section's, and the document-level ones. */
export type MergeChoices = {
  sections: Record<string, SectionChoice>;
  tagResolution?: "source" | "target";
  resolvedPath?: string;
  documentDeletionResolution?: "delete" | "keep";
  properties: Record<string, "source" | "target">;
};

export const NO_CHOICES: MergeChoices = { sections: {}, properties: {} };

/** What the choices are about: a merge request's analysis, or a changeset item's (the same shape). */
type ConflictAnalysis = Pick<
  MergeAnalysisView,
  "sections" | "hasTagConflicts" | "hasPathCollision" | "hasDocumentDeletionConflict" | "propertyConflicts"
>;
type AnalyzedSection = MergeAnalysisView["sections"][number];

/** The conflicts still without a choice, in words. */
export function missingChoices(analysis: ConflictAnalysis, choices: MergeChoices): string[] {
  return [
    ...analysis.sections.filter((s) => s.status === "conflict" && !choices.sections[s.sectionId]).map((s) => `section “${s.name}”`),
    analysis.hasTagConflicts && !choices.tagResolution ? "tags" : "",
    analysis.hasPathCollision && !choices.resolvedPath?.trim() ? "path" : "",
    analysis.hasDocumentDeletionConflict && !choices.documentDeletionResolution ? "deletion" : "",
    ...analysis.propertyConflicts.filter((c) => !choices.properties[c.columnId]).map((c) => `property ${c.columnId.slice(0, 8)}`),
  ].filter(Boolean);
}

/** The choices as `execute` takes them (a merge request's arguments; a changeset item's beside its document id). */
export function resolutionsOf(choices: MergeChoices) {
  return {
    resolutions: Object.entries(choices.sections).map(([sectionId, choice]) =>
      choice.resolution === "merged"
        ? {
            sectionId,
            resolution: "merged" as const,
            content: choice.text === "" ? [] : [{ blockType: "text" as const, text: choice.text }],
          }
        : { sectionId, resolution: choice.resolution },
    ),
    tagResolution: choices.tagResolution,
    scalarPropertyResolutions: Object.keys(choices.properties).length > 0 ? choices.properties : undefined,
    resolvedPath: choices.resolvedPath?.trim() || undefined,
    documentDeletionResolution: choices.documentDeletionResolution,
  };
}

/** A conflicting section: both sides' text, keep one, or write a merge starting from the proposed one. */
export function SectionConflict({
  section,
  sides,
  sourceBranch,
  targetBranch,
  choice,
  onChoose,
  name,
}: {
  section: AnalyzedSection;
  sides: { source: ConflictSide; target: ConflictSide } | undefined;
  sourceBranch: string;
  targetBranch: string;
  choice: SectionChoice | undefined;
  onChoose: (choice: SectionChoice) => void;
  /** The radio group's name, unique on the page. */
  name: string;
}) {
  const proposed = section.proposedMerge;
  return (
    <fieldset className="mr-conflict" data-testid="conflict">
      <legend>Keep which version of “{section.name}”?</legend>
      <div className="mr-sides">
        {(["source", "target"] as const).map((side) => (
          <div key={side} className="mr-side">
            <p className="small muted">
              {side === "source" ? sourceBranch : targetBranch} ({side})
            </p>
            <ConflictSideText side={sides?.[side] ?? NOT_READ} />
            <label className="mr-choice">
              <input type="radio" name={name} checked={choice?.resolution === side} onChange={() => onChoose({ resolution: side })} />
              Keep {side}
            </label>
          </div>
        ))}
      </div>
      {proposed ? (
        <div className="mr-proposed">
          <label className="mr-choice">
            <input
              type="radio"
              name={name}
              checked={choice?.resolution === "merged"}
              onChange={() => onChoose({ resolution: "merged", text: proposed.text })}
            />
            Write a merge
          </label>
          <p className="muted small mr-choice-hint">{proposalHint(proposed.conflictingHunks)}</p>
          {choice?.resolution === "merged" ? (
            <textarea
              className="mr-merge-editor"
              aria-label={`Merged text of ${section.name}`}
              value={choice.text}
              rows={Math.min(20, choice.text.split("\n").length + 2)}
              onChange={(event) => onChoose({ resolution: "merged", text: event.target.value })}
            />
          ) : null}
          {choice?.resolution === "merged" && /^(<{7}|={7}|>{7})( |$)/m.test(choice.text) ? (
            <p className="form-hint small">The text still holds conflict markers; they would be merged as written.</p>
          ) : null}
        </div>
      ) : null}
    </fieldset>
  );
}

/** The document-level conflicts: tags, path, deletion, properties. */
export function DocumentConflicts({
  analysis,
  choices,
  onChange,
  name,
}: {
  analysis: ConflictAnalysis;
  choices: MergeChoices;
  onChange: (change: (choices: MergeChoices) => MergeChoices) => void;
  /** Prefix of the radio groups' names, unique on the page. */
  name: string;
}) {
  return (
    <>
      {analysis.hasTagConflicts ? (
        <SideChoice
          legend="Tags"
          name={`${name}-tags`}
          value={choices.tagResolution}
          onChange={(v) => onChange((c) => ({ ...c, tagResolution: v }))}
        />
      ) : null}
      {analysis.hasPathCollision ? (
        <fieldset className="mr-conflict">
          <legend>Path</legend>
          <label className="field">
            <span>Both branches moved the document, or its new path is taken. The path after the merge:</span>
            <input
              value={choices.resolvedPath ?? ""}
              onChange={(event) => onChange((c) => ({ ...c, resolvedPath: event.target.value }))}
              placeholder="folder/name"
            />
          </label>
        </fieldset>
      ) : null}
      {analysis.hasDocumentDeletionConflict ? (
        <fieldset className="mr-conflict">
          <legend>Deletion</legend>
          <p className="small muted">One branch deleted the document while the other changed it.</p>
          {(["keep", "delete"] as const).map((v) => (
            <label key={v} className="mr-choice">
              <input
                type="radio"
                name={`${name}-deletion`}
                checked={choices.documentDeletionResolution === v}
                onChange={() => onChange((c) => ({ ...c, documentDeletionResolution: v }))}
              />
              {v === "keep" ? "Keep the document" : "Delete the document"}
            </label>
          ))}
        </fieldset>
      ) : null}
      {analysis.propertyConflicts.map((p) => (
        <SideChoice
          key={p.columnId}
          legend={`Property ${p.columnId.slice(0, 8)}: ${String(p.source ?? "unset")} (source) or ${String(p.target ?? "unset")} (target)`}
          name={`${name}-property-${p.columnId}`}
          value={choices.properties[p.columnId]}
          onChange={(v) => onChange((c) => ({ ...c, properties: { ...c.properties, [p.columnId]: v } }))}
        />
      ))}
    </>
  );
}

export function ConflictSideText({ side }: { side: ConflictSide }) {
  if (side.kind === "unread") {
    return (
      <p className="form-error" role="alert" data-testid="conflict-side-unread">
        This side could not be read: {side.message}
      </p>
    );
  }
  return <pre className="mr-side-text">{side.kind === "text" ? side.text : "(deleted on this branch)"}</pre>;
}

function proposalHint(conflictingHunks: number): string {
  if (conflictingHunks === 0) return "Starts from a line-by-line merge of both sides, which applied cleanly; edit it as you like.";
  const hunks = conflictingHunks === 1 ? "1 place both sides changed is" : `${conflictingHunks} places both sides changed are`;
  return `Starts from a line-by-line merge of both sides; ${hunks} marked with <<<<<<< for you to settle.`;
}

/** Keep the source's or the target's version: one choice of a conflict that is not about a section's text. */
function SideChoice({
  legend,
  name,
  value,
  onChange,
}: {
  legend: string;
  name: string;
  value: "source" | "target" | undefined;
  onChange: (value: "source" | "target") => void;
}) {
  return (
    <fieldset className="mr-conflict">
      <legend>{legend}</legend>
      {(["source", "target"] as const).map((v) => (
        <label key={v} className="mr-choice">
          <input type="radio" name={name} checked={value === v} onChange={() => onChange(v)} />
          Keep {v}
        </label>
      ))}
    </fieldset>
  );
}
