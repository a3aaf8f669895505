"use client";

/**
 * Whether a document's editors show the live preview or the markdown source:
 * one choice for the whole document, remembered per document in this
 * browser (localStorage), live preview until someone picks the source.
 */
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from "react";
import type { EditorMode } from "./index";

const storageKey = (documentId: string) => `quire:editor-mode:${documentId}`;

interface ModeChoice {
  mode: EditorMode;
  setMode: (mode: EditorMode) => void;
}

const EditorModeContext = createContext<ModeChoice>({ mode: "preview", setMode: () => {} });

/** The mode the editors below it use, and the switch for it. */
export function useEditorMode(): ModeChoice {
  return useContext(EditorModeContext);
}

export function EditorModeProvider({ documentId, children }: { documentId: string; children: ReactNode }) {
  // The server renders the default; the stored choice is read once the page runs (before any room syncs and an editor mounts).
  const [mode, setShown] = useState<EditorMode>("preview");
  useEffect(() => {
    setShown(readMode(documentId));
  }, [documentId]);
  const setMode = useCallback(
    (next: EditorMode) => {
      setShown(next);
      try {
        if (next === "preview") localStorage.removeItem(storageKey(documentId));
        else localStorage.setItem(storageKey(documentId), next);
      } catch {
        // Storage may be off (private windows, policies): the choice then lasts as long as the page.
      }
    },
    [documentId],
  );
  const choice = useMemo(() => ({ mode, setMode }), [mode, setMode]);
  return <EditorModeContext.Provider value={choice}>{children}</EditorModeContext.Provider>;
}

function readMode(documentId: string): EditorMode {
  try {
    return localStorage.getItem(storageKey(documentId)) === "source" ? "source" : "preview";
  } catch {
    return "preview";
  }
}

/** The document-wide switch between the live preview and the markdown source. */
export function EditorModeToggle() {
  const { mode, setMode } = useEditorMode();
  return (
    <button
      type="button"
      className="button button-small button-quiet editor-mode-toggle"
      aria-pressed={mode === "source"}
      title="Show the markdown as it is written, in every section of this document (remembered in this browser)"
      onClick={() => setMode(mode === "source" ? "preview" : "source")}
    >
      Markdown source
    </button>
  );
}
