/**
 * The editor's live preview, as Obsidian and Typora do it: markdown rendered
 * in place by CodeMirror decorations over the text, which itself stays the
 * markdown (and comment markup) it is stored as. One extension per kind of
 * markdown; each finds its nodes in lang-markdown's syntax tree, inline ones
 * only on the lines on screen. `editorMode` switches an editor between this
 * and the markdown source without rebuilding it.
 */
import { syntaxHighlighting } from "@codemirror/language";
import { Compartment, type Extension } from "@codemirror/state";
import type { Highlighter } from "@lezer/highlight";
import { previewStyle, proseStyle } from "../editor-extensions";
import { type Decorator, editorFocus } from "./decorate";
import { headings } from "./headings";
import { images } from "./images";
import { inlineMarks } from "./inline-marks";
import { linkClicks, links } from "./links";
import { lists } from "./lists";
import { quotes } from "./quotes";
import { tables } from "./tables";

export type EditorMode = "preview" | "source";

/** What a mode draws: the syntax highlighting, and the decorators (none in the source). Placeholders draw the same. */
export const modeLook: Record<EditorMode, { highlighter: Highlighter; decorators: readonly Decorator[] }> = {
  preview: { highlighter: previewStyle, decorators: [headings, inlineMarks, links, lists, quotes, images, tables] },
  source: { highlighter: proseStyle, decorators: [] },
};

const livePreview: Extension = [
  editorFocus,
  syntaxHighlighting(modeLook.preview.highlighter),
  modeLook.preview.decorators.map((d) => d.extension),
  linkClicks,
];
const markdownSource: Extension = syntaxHighlighting(modeLook.source.highlighter);

/** Holds an editor's mode; `modeExtension` fills it. */
export const editorMode = new Compartment();

export const modeExtension = (mode: EditorMode): Extension => (mode === "preview" ? livePreview : markdownSource);
