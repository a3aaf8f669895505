/**
 * What full-text search reads and shows, as pure functions: a section's words
 * (its markdown and comment markup stripped), a document path's words, the
 * query split into what PostgreSQL parses (websearch syntax) and the word
 * still being typed (matched as a prefix), and a highlighted snippet as
 * structured parts (never HTML).
 */
import type { Block } from "./blocks";
import { commentTagTokens, existingCommentTags } from "./comment-markup";
import type { SectionVersion } from "./document-model";

/** Marks PostgreSQL's ts_headline puts around a highlighted word: control characters no indexed text holds (`searchableText` drops them). */
export const HIGHLIGHT_START = "\u0002";
export const HIGHLIGHT_STOP = "\u0003";

/** Control characters (tab and newline become spaces): they carry no words, and two of them mark highlights. */
const CONTROL = /[\u0000-\u001f\u007f]+/g;

/** Markdown syntax that is not words: images keep their alt text, links their text, code fences and HTML tags go. */
function markdownToWords(markdown: string): string {
  return (
    markdown
      // Images before links: ![alt](url) keeps alt.
      .replace(/!\[([^\]]*)\]\([^)]*\)/g, " $1 ")
      .replace(/\[([^\]]*)\]\([^)]*\)/g, " $1 ")
      // Reference-style link definitions and autolinks.
      .replace(/^\s*\[[^\]]+\]:\s*\S+.*$/gm, " ")
      .replace(/<(https?:[^>\s]+)>/g, " $1 ")
      // Fence lines and HTML tags (the words between tags stay).
      .replace(/^\s*(```|~~~).*$/gm, " ")
      .replace(/<\/?[A-Za-z][^>]*>/g, " ")
      // Headings, quotes, list markers, table pipes and rules, emphasis and code marks.
      .replace(/^\s{0,3}(#{1,6}|>+|[-*+]|\d+[.)])\s+/gm, " ")
      .replace(/^\s*[-*_=|:\s]{3,}$/gm, " ")
      .replace(/[|*_~`#>]+/g, " ")
  );
}

/** A text block's words: the comment tags leave (their markup is no word), the commented text stays. */
function textBlockWords(text: string): string {
  let plain = "";
  let from = 0;
  for (const token of commentTagTokens(text)) {
    plain += `${text.slice(from, token.index)} `;
    from = token.index + token.raw.length;
  }
  return markdownToWords(plain + text.slice(from));
}

function blockWords(block: Block): string {
  switch (block.blockType) {
    case "text":
      return textBlockWords(block.text);
    case "image":
      return block.type === "file" ? "" : [block.alt, block.caption].filter(Boolean).join(" ");
    case "document":
    case "file":
      return block.filename;
    case "csv":
      return `${block.filename} ${block.headers.join(" ")}`;
    case "database_embed":
      return "";
  }
}

/** Collapses whitespace and drops control characters. */
export function searchableText(text: string): string {
  return text.replace(CONTROL, " ").replace(/\s+/g, " ").trim();
}

/**
 * How much of a section's text is indexed. PostgreSQL refuses a tsvector over
 * 1 MiB, which a section may reach (a text block holds up to 1,000,000
 * characters, and a section several blocks); one such section then kept its
 * whole branch out of the index. Past this many characters (a long book
 * chapter) the rest of a section is not searchable.
 */
export const MAX_INDEXED_SECTION_CHARS = 200_000;

/** A section's words as search indexes and shows them: its blocks' text, without markdown syntax or comment markup (the first MAX_INDEXED_SECTION_CHARS of it, ending at a word). */
export function sectionWords(version: SectionVersion): string {
  const words = searchableText(version.content.map(blockWords).join("\n"));
  if (words.length <= MAX_INDEXED_SECTION_CHARS) return words;
  const cut = words.lastIndexOf(" ", MAX_INDEXED_SECTION_CHARS);
  return words.slice(0, cut > 0 ? cut : MAX_INDEXED_SECTION_CHARS);
}

/** The comments anchored in a section version's text (by their markup). */
export function anchoredCommentIds(version: SectionVersion): string[] {
  const ids = new Set<string>();
  for (const block of version.content) {
    if (block.blockType === "text") for (const tag of existingCommentTags(block.text)) ids.add(tag.id);
  }
  return [...ids].filter((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id));
}

/** A document path's words: "handbook/it/vpn-setup" is "handbook it vpn setup". */
export function pathWords(path: string): string {
  return searchableText(path.replace(/[^\p{L}\p{N}]+/gu, " "));
}

/** The longest query accepted. */
export const MAX_QUERY_CHARS = 200;

export interface ParsedQuery {
  /** The query as PostgreSQL's websearch_to_tsquery reads it: words, "quoted phrases", `or`, -excluded. */
  websearch: string;
  /**
   * The last word, when it may still be being typed (a plain word at the end,
   * not quoted or excluded): matched as a prefix too. Null otherwise.
   */
  prefix: string | null;
  /** The query without that last word (what the prefix is added to). */
  beforePrefix: string;
  /** The plain words (not excluded), lower-cased: what a mistyped query is corrected from. */
  words: string[];
}

const WORD = /^[\p{L}\p{N}]+$/u;

export function parseQuery(query: string): ParsedQuery {
  const websearch = searchableText(query);
  const quotes = (websearch.match(/"/g) ?? []).length;
  const lastSpace = websearch.lastIndexOf(" ");
  const last = websearch.slice(lastSpace + 1);
  const prefix = quotes % 2 === 0 && WORD.test(last) && last.toLowerCase() !== "or" && last.length >= 2 ? last.toLowerCase() : null;
  const words = websearch
    .replace(/"/g, " ")
    .split(" ")
    .filter((w) => w !== "" && !w.startsWith("-") && w.toLowerCase() !== "or")
    .map((w) => w.replace(/[^\p{L}\p{N}]+/gu, "").toLowerCase())
    .filter((w) => w.length >= 3);
  return { websearch, prefix, beforePrefix: lastSpace < 0 ? "" : websearch.slice(0, lastSpace), words };
}

/** A piece of a snippet; `highlighted` pieces are the words that matched. */
export interface SnippetPart {
  text: string;
  highlighted: boolean;
}

/** Splits ts_headline's output (words between HIGHLIGHT_START and HIGHLIGHT_STOP) into parts, joining neighbours of one kind. */
export function snippetParts(headline: string): SnippetPart[] {
  const parts: SnippetPart[] = [];
  const push = (text: string, highlighted: boolean) => {
    if (text === "") return;
    const previous = parts.at(-1);
    if (previous && previous.highlighted === highlighted) previous.text += text;
    else parts.push({ text, highlighted });
  };
  let rest = headline;
  for (;;) {
    const start = rest.indexOf(HIGHLIGHT_START);
    if (start < 0) break;
    const stop = rest.indexOf(HIGHLIGHT_STOP, start);
    if (stop < 0) break;
    push(rest.slice(0, start), false);
    push(rest.slice(start + 1, stop), true);
    rest = rest.slice(stop + 1);
  }
  push(rest.replace(/[\u0002\u0003]/g, ""), false);
  return parts;
}

/**
 * A tsquery (for `to_tsquery('simple', …)`) from lexemes suggested for each
 * mistyped word: any suggestion of a word, every word. Lexemes are quoted,
 * so no input can be read as tsquery syntax.
 */
export function suggestionsQuery(suggestions: ReadonlyArray<readonly string[]>): string {
  const quote = (lexeme: string) => `'${lexeme.replace(/'/g, "''").replace(/\\/g, "\\\\")}'`;
  return suggestions
    .filter((s) => s.length > 0)
    .map((s) => `(${s.map(quote).join(" | ")})`)
    .join(" & ");
}
