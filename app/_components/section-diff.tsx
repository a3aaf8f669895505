"use client";

/** One section's diff (a unified diff from the server) in unified or split view, with word-level highlights inside changed lines. */
import { diffWordsWithSpace, parsePatch } from "diff";
import type { ReactNode } from "react";
import "./section-diff.css";

export type DiffView = "unified" | "split";

/** The Split / Unified switch above a page's diffs. */
export function DiffViewToggle({ view, onChange }: { view: DiffView; onChange: (view: DiffView) => void }) {
  return (
    <fieldset className="mr-toggle">
      <legend className="visually-hidden">Diff view</legend>
      {(["split", "unified"] as const).map((v) => (
        <label key={v} className={view === v ? "mr-toggle-on" : undefined}>
          <input type="radio" name="diff-view" value={v} checked={view === v} onChange={() => onChange(v)} />
          {v === "split" ? "Split" : "Unified"}
        </label>
      ))}
    </fieldset>
  );
}

type Line = { kind: "context" | "removed" | "added"; text: string; pairedWith?: string };

/** The diff's lines, a removed run and the added run after it paired line by line (so words can be compared). */
function diffLines(unified: string): Line[][] {
  return parsePatch(unified).flatMap((file) =>
    file.hunks.map((hunk) => {
      const lines: Line[] = hunk.lines
        .filter((l) => !l.startsWith("\\"))
        .map((l) => ({ kind: l[0] === "-" ? "removed" : l[0] === "+" ? "added" : "context", text: l.slice(1) }));
      for (let i = 0; i < lines.length; ) {
        if (lines[i]!.kind !== "removed") {
          i += 1;
          continue;
        }
        let end = i;
        while (lines[end]?.kind === "removed") end += 1;
        let addedEnd = end;
        while (lines[addedEnd]?.kind === "added") addedEnd += 1;
        for (let k = 0; k < Math.min(end - i, addedEnd - end); k += 1) {
          lines[i + k]!.pairedWith = lines[end + k]!.text;
          lines[end + k]!.pairedWith = lines[i + k]!.text;
        }
        i = addedEnd;
      }
      return lines;
    }),
  );
}

function Words({ line }: { line: Line }): ReactNode {
  if (line.pairedWith === undefined || line.kind === "context") return line.text || " ";
  const [before, after] = line.kind === "removed" ? [line.text, line.pairedWith] : [line.pairedWith, line.text];
  return diffWordsWithSpace(before, after).map((part, i) => {
    if (line.kind === "removed" ? part.added : part.removed) return null;
    const changed = line.kind === "removed" ? part.removed : part.added;
    return changed ? (
      // biome-ignore lint/suspicious/noArrayIndexKey: parts have no identity beyond their order
      <mark key={i} className={`diff-word diff-word-${line.kind}`}>
        {part.value}
      </mark>
    ) : (
      part.value
    );
  });
}

const SIGN = { context: " ", removed: "−", added: "+" } as const;

export function SectionDiff({ unified, view, label }: { unified: string; view: DiffView; label: string }) {
  const hunks = diffLines(unified);
  if (hunks.length === 0) return <p className="muted small">No textual change.</p>;
  if (view === "unified") {
    return (
      <section className="diff diff-unified" aria-label={label}>
        {hunks.map((lines, h) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: hunks are shown in order and never reordered
          <div key={h} className="diff-hunk">
            {lines.map((line, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: lines are shown in order and never reordered
              <div key={i} className={`diff-line diff-${line.kind}`}>
                <span className="diff-sign" aria-hidden="true">
                  {SIGN[line.kind]}
                </span>
                <span className="diff-text">
                  <Words line={line} />
                </span>
              </div>
            ))}
          </div>
        ))}
      </section>
    );
  }
  return (
    <section className="diff diff-split" aria-label={label}>
      {hunks.map((lines, h) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: hunks are shown in order and never reordered
        <div key={h} className="diff-hunk">
          {splitRows(lines).map(([left, right], i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: rows are shown in order and never reordered
            <div key={i} className="diff-split-row">
              <SplitCell line={left} />
              <SplitCell line={right} />
            </div>
          ))}
        </div>
      ))}
    </section>
  );
}

function SplitCell({ line }: { line: Line | null }) {
  if (!line) return <span className="diff-cell diff-empty" />;
  return (
    <span className={`diff-cell diff-${line.kind}`}>
      <Words line={line} />
    </span>
  );
}

/** Split view rows: context on both sides, removed lines on the left beside the added lines that replaced them. */
function splitRows(lines: Line[]): Array<[Line | null, Line | null]> {
  const rows: Array<[Line | null, Line | null]> = [];
  for (let i = 0; i < lines.length; ) {
    const line = lines[i]!;
    if (line.kind === "context") {
      rows.push([line, line]);
      i += 1;
      continue;
    }
    const removed: Line[] = [];
    const added: Line[] = [];
    while (lines[i]?.kind === "removed") removed.push(lines[i++]!);
    while (lines[i]?.kind === "added") added.push(lines[i++]!);
    for (let k = 0; k < Math.max(removed.length, added.length); k += 1) rows.push([removed[k] ?? null, added[k] ?? null]);
  }
  return rows;
}
