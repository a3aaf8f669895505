"use client";

/**
 * One CodeMirror 6 editor bound to one Y.Text of a section room with
 * y-codemirror.next: local edits go into the Y.Text, remote ones come out of
 * it, remote carets and selections show in their owners' colours (only
 * `#rrggbb` ones: `withSafeColours`). Undo and redo go through a
 * Y.UndoManager that tracks only this editor's own changes, so they never
 * take back what someone else typed. What is typed or pasted stays within
 * the server's limits (`withinLimits`); a change past them is refused whole
 * and the person told at once, in the page's toast.
 */
import "./preview.css";
import { defaultKeymap } from "@codemirror/commands";
import { markdown, markdownLanguage } from "@codemirror/lang-markdown";
import { EditorState, type Extension } from "@codemirror/state";
import { EditorView, keymap, placeholder as placeholderText } from "@codemirror/view";
import { useContext, useEffect, useLayoutEffect, useRef, useState } from "react";
import { useToast } from "@/app/_components/toast";
import { yCollab, yUndoManagerKeymap } from "y-codemirror.next";
import type { Awareness } from "y-protocols/awareness";
import * as Y from "yjs";
import { CommentComposer, type CommentTarget, type TextRange } from "./comment-composer";
import { ResolvedCommentsContext } from "./comment-highlights";
import {
  commentMarkupExtension,
  proseTheme,
  SECTION_NAME_LIMITS,
  setResolvedComments,
  TEXT_BLOCK_LIMITS,
  withinLimits,
} from "./editor-extensions";
import { REFUSAL_SHOWN_MS } from "./live-room";
import { withSafeColours } from "./presence";
import { editorMode, modeExtension } from "./preview";
import { listEditing } from "./preview/list-editing";
import { useEditorMode } from "./preview/mode";

export function TextEditor({
  text,
  awareness,
  label,
  kind,
  placeholder,
  blockIndex,
  commentOn,
}: {
  text: Y.Text;
  awareness: Awareness;
  /** The accessible name of the editor. */
  label: string;
  /** `prose`: a markdown text block; `name`: the section's one-line name. */
  kind: "prose" | "name";
  /** A text block's place in its section (marked on the editor, for what is inserted or dropped there). */
  blockIndex?: number;
  placeholder?: string;
  /** Where a comment written here is posted (for a signed-in person); without it no Comment is offered. */
  commentOn?: CommentTarget;
}) {
  const host = useRef<HTMLDivElement>(null);
  // A prose editor offers Comment while text is selected; the range is read at the moment the comment is added.
  const selection = useRef<TextRange | null>(null);
  const [selecting, setSelecting] = useState(false);
  const [composing, setComposing] = useState(false);
  const resolvedComments = useContext(ResolvedCommentsContext);
  const toast = useToast();
  const { mode } = useEditorMode();
  const view = useRef<EditorView | null>(null);
  // The mode an editor is built with (the latest); later switches reconfigure it in place (below) rather than rebuild it.
  const latestMode = useRef(mode);
  latestMode.current = mode;

  // Before the browser paints: an editor's host is empty until CodeMirror fills it, and painting it empty would make the page jump.
  useLayoutEffect(() => {
    const parent = host.current;
    if (!parent) return;
    const undoManager = new Y.UndoManager(text);
    const extensions: Extension[] = [
      // Tab is left to the browser: it moves focus on, so the page stays keyboard reachable.
      keymap.of([...yUndoManagerKeymap, ...defaultKeymap]),
      yCollab(text, withSafeColours(awareness), { undoManager }),
      withinLimits(kind === "prose" ? TEXT_BLOCK_LIMITS : SECTION_NAME_LIMITS, (message) =>
        toast({ message, durationMs: REFUSAL_SHOWN_MS }),
      ),
      proseTheme,
      EditorView.contentAttributes.of({
        "aria-label": label,
        "aria-multiline": kind === "prose" ? "true" : "false",
        // CodeMirror turns the browser's spell check off; prose is what it is for.
        spellcheck: "true",
        autocorrect: "on",
        autocapitalize: kind === "prose" ? "sentences" : "words",
      }),
      placeholder ? placeholderText(placeholder) : [],
      kind === "prose"
        ? [
            // GitHub-flavoured (tables, strikethrough, task lists), as the rendered view reads it; list keys are listEditing's.
            markdown({ base: markdownLanguage, addKeymap: false }),
            listEditing,
            editorMode.of(modeExtension(latestMode.current)),
            EditorView.lineWrapping,
            commentMarkupExtension(resolvedComments?.ids ?? new Set()),
            keymap.of([
              {
                key: "Mod-Alt-m",
                run: () => {
                  if (selection.current === null) return false;
                  setComposing(true);
                  return true;
                },
              },
            ]),
            EditorView.updateListener.of((update) => {
              if (!update.selectionSet && !update.docChanged) return;
              const { from, to, empty } = update.state.selection.main;
              const wasSelecting = selection.current !== null;
              selection.current = empty ? null : { from, to };
              // Only a change between "something selected" and "nothing" renders. Typing does not even ask React: a state
              // set to its own value still schedules a render pass to find out, on every keystroke and every peer's change.
              if (wasSelecting === empty) setSelecting(!empty);
            }),
          ]
        : [],
    ];
    const editor = new EditorView({ parent, state: EditorState.create({ doc: text.toString(), extensions }) });
    view.current = editor;
    const unsubscribe =
      kind === "prose" && resolvedComments
        ? resolvedComments.subscribe(() => editor.dispatch({ effects: setResolvedComments.of(resolvedComments.ids) }))
        : () => {};
    return () => {
      unsubscribe();
      view.current = null;
      editor.destroy();
      undoManager.destroy();
    };
  }, [text, awareness, label, kind, placeholder, resolvedComments, toast]);

  useEffect(() => {
    const editor = view.current;
    if (kind !== "prose" || !editor || editorMode.get(editor.state) === modeExtension(mode)) return;
    editor.dispatch({ effects: editorMode.reconfigure(modeExtension(mode)) });
  }, [kind, mode]);

  return (
    <>
      <div
        ref={host}
        className={kind === "prose" ? "live-text-editor" : "live-name-editor"}
        data-testid={`editor-${kind}`}
        data-block-index={blockIndex}
      />
      {kind === "prose" && commentOn && blockIndex !== undefined && (selecting || composing) ? (
        <CommentComposer
          text={text}
          target={commentOn}
          blockIndex={blockIndex}
          selection={() => selection.current}
          open={composing}
          setOpen={setComposing}
        />
      ) : null}
    </>
  );
}
