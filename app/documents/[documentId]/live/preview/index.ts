/**
 * The editor's live preview, as Obsidian and Typora do it: markdown rendered
 * in place by CodeMirror decorations over the text, which itself stays the
 * markdown (and comment markup) it is stored as. One extension per kind of
 * markdown; each finds its nodes in lang-markdown's syntax tree, inline ones
 * only on the lines on screen. `editorMode` switches an editor between this
 * and the markdown source without rebuilding it.
 */
import { Compartment, type Extension } from "@codemirror/state";
import { previewHighlighting, proseHighlighting } from "../editor-extensions";
import { editorFocus } from "./decorate";
import { headings } from "./headings";
import { images } from "./images";
import { inlineMarks } from "./inline-marks";
import { links } from "./links";
import { lists } from "./lists";
import { quotes } from "./quotes";
import { tables } from "./tables";

export type EditorMode = "preview" | "source";

export const livePreview: Extension = [editorFocus, previewHighlighting, headings, inlineMarks, links, lists, quotes, images, tables];

/** Holds an editor's mode; `modeExtension` fills it. */
export const editorMode = new Compartment();

export const modeExtension = (mode: EditorMode): Extension => (mode === "preview" ? livePreview : proseHighlighting);
