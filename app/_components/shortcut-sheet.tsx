"use client";

/**
 * The keyboard shortcuts, listed: `?` anywhere (except while typing in a
 * field or the editor, where it is a character) or the header's "?" button
 * opens the sheet, a modal dialog; Escape or Close shuts it and focus goes
 * back where it was (the browser's own <dialog> behaviour).
 */
import "./shortcut-sheet.css";
import { useEffect, useRef } from "react";

/** One shortcut: its keys (each group one way to press it) and what it does. */
interface Shortcut {
  keys: string[][];
  does: string;
}

const MOD = ["Ctrl / ⌘"];

const GROUPS: ReadonlyArray<{ title: string; shortcuts: Shortcut[] }> = [
  {
    title: "Anywhere",
    shortcuts: [
      { keys: [[...MOD, "K"]], does: "Quick open: find a document or section" },
      { keys: [["?"]], does: "Show these shortcuts" },
      { keys: [["Esc"]], does: "Close a menu or dialog" },
    ],
  },
  {
    title: "Document page",
    shortcuts: [
      { keys: [[...MOD, "S"]], does: "Open the commit box (Enter commits)" },
      { keys: [[...MOD, "Shift", "P"]], does: "Show the markdown source (again: the live preview)" },
      {
        keys: [
          ["Alt", "↑"],
          ["Alt", "↓"],
        ],
        does: "Move the selected block up or down",
      },
      { keys: [["Delete"]], does: "Remove the selected block (Undo in the notice)" },
    ],
  },
  {
    title: "Editor",
    shortcuts: [
      { keys: [[...MOD, "Z"]], does: "Undo" },
      {
        keys: [
          [...MOD, "Shift", "Z"],
          [...MOD, "Y"],
        ],
        does: "Redo",
      },
      { keys: [[...MOD, "Alt", "M"]], does: "Comment on the selected text" },
      { keys: [["Enter"]], does: "Continue a list; on an empty item, end it" },
      { keys: [["Tab"], ["Shift", "Tab"]], does: "Indent or outdent a list item" },
    ],
  },
];

/** Whether a key press is typing: into a field, a select, or an editable text such as the editor. */
const isTyping = (target: EventTarget | null) =>
  target instanceof HTMLElement && (target.isContentEditable || target.closest("input, textarea, select, [contenteditable]") !== null);

export function ShortcutSheet() {
  const dialog = useRef<HTMLDialogElement>(null);
  const open = () => {
    if (!dialog.current?.open) dialog.current?.showModal();
  };

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== "?" || event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented || isTyping(event.target)) return;
      event.preventDefault();
      if (!dialog.current?.open) dialog.current?.showModal();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  return (
    <>
      <button
        type="button"
        className="shortcut-sheet-button"
        aria-haspopup="dialog"
        aria-keyshortcuts="?"
        aria-label="Keyboard shortcuts"
        title="Keyboard shortcuts (?)"
        onClick={open}
      >
        ?
      </button>
      {/* biome-ignore lint/a11y/useKeyWithClickEvents: the backdrop press is the pointer's way out; Escape (the dialog's own) is the keyboard's */}
      <dialog
        ref={dialog}
        className="shortcut-sheet"
        aria-labelledby="shortcut-sheet-title"
        // A press on the backdrop (the dialog element itself, outside its box) closes it.
        onClick={(event) => {
          if (event.target === event.currentTarget) event.currentTarget.close();
        }}
      >
        <div className="shortcut-sheet-inner">
          <div className="shortcut-sheet-head">
            <h2 id="shortcut-sheet-title">Keyboard shortcuts</h2>
            <button type="button" className="button button-small button-quiet" onClick={() => dialog.current?.close()}>
              Close
            </button>
          </div>
          {GROUPS.map((group) => (
            <section key={group.title} aria-label={group.title}>
              <h3>{group.title}</h3>
              <dl>
                {group.shortcuts.map((shortcut) => (
                  <div key={shortcut.does} className="shortcut">
                    <dt>
                      {shortcut.keys.map((combo, i) => (
                        <span key={combo.join("+")}>
                          {i > 0 ? <span className="muted"> or </span> : null}
                          {combo.map((key, k) => (
                            <span key={key}>
                              {k > 0 ? "+" : null}
                              <kbd>{key}</kbd>
                            </span>
                          ))}
                        </span>
                      ))}
                    </dt>
                    <dd>{shortcut.does}</dd>
                  </div>
                ))}
              </dl>
            </section>
          ))}
        </div>
      </dialog>
    </>
  );
}
