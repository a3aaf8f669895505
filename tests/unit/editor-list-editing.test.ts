/**
 * The editor's list keys (app/documents/[documentId]/live/preview/list-editing.ts) on the markdown text: Enter continues
 * and ends lists, Tab and Shift+Tab move items. The commands are run on an editor state, as the keys run them.
 */
import { insertNewlineContinueMarkup, markdown, markdownLanguage } from "@codemirror/lang-markdown";
import { ensureSyntaxTree } from "@codemirror/language";
import { EditorSelection, EditorState, type StateCommand } from "@codemirror/state";
import { describe, expect, it } from "vitest";
import { endEmptyListItem, indentListItem, outdentListItem } from "@/app/documents/[documentId]/live/preview/list-editing";

/** Runs `command` on `text` with the caret at `|` (or a selection between two `|`); the text after it with its caret, or null when it did not apply. */
function run(command: StateCommand, text: string): string | null {
  const [before, ...rest] = text.split("|");
  const from = before!.length;
  const to = rest.length === 2 ? from + rest[0]!.length : from;
  let state = EditorState.create({
    doc: text.replaceAll("|", ""),
    selection: EditorSelection.range(from, to),
    extensions: markdown({ base: markdownLanguage }),
  });
  ensureSyntaxTree(state, state.doc.length, 5_000);
  const applied = command({ state, dispatch: (tr) => (state = tr.state) });
  if (!applied) return null;
  const head = state.selection.main.head;
  const doc = state.doc.toString();
  return `${doc.slice(0, head)}|${doc.slice(head)}`;
}

/** Enter as the list keymap runs it: the empty-item command first, then lang-markdown's continuation. */
const enter: StateCommand = (target) => endEmptyListItem(target) || insertNewlineContinueMarkup(target);

describe("Enter in a list", () => {
  it("continues a bullet list, a numbered list (next number) and a task list (an open task)", () => {
    expect(run(enter, "- one|")).toBe("- one\n- |");
    expect(run(enter, "1. one\n2. two|")).toBe("1. one\n2. two\n3. |");
    expect(run(enter, "- [x] done|")).toBe("- [x] done\n- [ ] |");
  });

  it("ends the list on an empty item, with a blank line so the next paragraph is not inside the last item", () => {
    expect(run(enter, "- one\n- two\n- |")).toBe("- one\n- two\n\n|");
    expect(run(enter, "- one\n- |")).toBe("- one\n\n|");
    expect(run(enter, "1. one\n2. |")).toBe("1. one\n\n|");
    expect(run(enter, "- [ ] task\n- [ ] |")).toBe("- [ ] task\n\n|");
  });

  it("moves an empty nested item out one level instead", () => {
    expect(run(enter, "- one\n  - two\n  - |")).toBe("- one\n  - two\n- |");
  });

  it("leaves Enter outside lists and inside an item's text to the other commands", () => {
    expect(run(endEmptyListItem, "plain text|")).toBeNull();
    expect(run(endEmptyListItem, "- one|")).toBeNull();
    expect(run(endEmptyListItem, "- |one")).toBeNull();
  });
});

describe("Tab and Shift+Tab in a list", () => {
  it("indents an item under the one above, past its marker", () => {
    expect(run(indentListItem, "- one\n- tw|o")).toBe("- one\n  - tw|o");
    expect(run(indentListItem, "1. one\n2. tw|o")).toBe("1. one\n   1. tw|o");
  });

  it("moves an item's sub-items with it", () => {
    expect(run(indentListItem, "- one\n- tw|o\n  - three\n- four")).toBe("- one\n  - tw|o\n    - three\n- four");
  });

  it("does not indent the first item of a list, and keeps Tab (no focus change) there", () => {
    expect(run(indentListItem, "- on|e\n- two")).toBe("- on|e\n- two");
  });

  it("outdents an item beside its parent, a numbered one taking the number after it", () => {
    expect(run(outdentListItem, "- one\n  - tw|o")).toBe("- one\n- tw|o");
    expect(run(outdentListItem, "1. one\n   1. tw|o")).toBe("1. one\n2. tw|o");
  });

  it("is not a list key outside lists: Tab moves focus on", () => {
    expect(run(indentListItem, "plain| text")).toBeNull();
    expect(run(outdentListItem, "plain| text")).toBeNull();
  });
});
