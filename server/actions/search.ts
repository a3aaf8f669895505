/**
 * The `search` tool: full-text search over what the caller may see (document
 * names and paths, section names and text, comment threads, merge requests),
 * ranked, with highlighted snippets and where each hit is.
 *
 * Access is server/access's: each match is kept only when the caller may read
 * its document (`accessWithGrant`, an agent capped by aiAccess) and, for a
 * section or a comment in one, when the caller's `sectionRules` on that branch
 * show the section (hiding at the default head covers every branch). Matches
 * left out are not counted, and snippets are made only of what is kept.
 */
import { z } from "zod";
import type { Permission } from "@/server/core/document-model";
import { DomainError } from "@/server/core/errors";
import { MAX_QUERY_CHARS, parseQuery, snippetParts, suggestionsQuery } from "@/server/core/search-text";
import { grantsFor } from "@/server/store/access";
import type { DocumentRow } from "@/server/store/documents";
import {
  SEARCH_KINDS,
  type SearchCandidate,
  type SearchFilters,
  type SearchKind,
  type SearchTerms,
  documentsById,
  searchCandidates,
  searchMatchGroups,
  searchHitDetails,
  suggestedLexemes,
} from "@/server/store/search";
import { bringIndexUpToDate, reindexAll } from "@/server/store/search-index";
import { accessWithGrant, type SectionRules, sectionRules, subjectOf } from "@/server/access/documents";
import type { ActionContext } from "./context";
import { decodeCursor, defineTool, encodeCursor, uuidSchema } from "./tool";
import { passedBack } from "@/server/core/schema-listing";

const DEFAULT_SEARCH_LIMIT = 20;
const MAX_SEARCH_LIMIT = 50;

export const searchInput = z.strictObject({
  query: z
    .string()
    .trim()
    .min(1, "query must not be empty")
    .max(MAX_QUERY_CHARS)
    .describe('Words (all must match), "a phrase", `or`, -word. Typos and prefixes are tried when nothing matches.'),
  kind: z.enum(SEARCH_KINDS).optional().describe("Default: all."),
  branchName: z.string().trim().min(1).max(200).optional().describe("Default: each document's default branch."),
  pathPrefix: z.string().max(500).optional().describe('Path prefix, e.g. "handbook/".'),
  tagId: uuidSchema.optional().describe("Only documents with this tag."),
  limit: z.number().int().min(1).max(MAX_SEARCH_LIMIT).optional().describe(`Default ${DEFAULT_SEARCH_LIMIT}.`),
  cursor: passedBack(z.string().max(1_000)).optional().describe("The last page's nextCursor."),
});

type SearchInput = z.output<typeof searchInput>;

/** A piece of a snippet: `highlighted` pieces are the words that matched (render them marked, e.g. <mark>). */
export interface SearchSnippetPart {
  text: string;
  highlighted: boolean;
}

export interface SearchHit {
  kind: SearchKind;
  documentId: string;
  documentName: string;
  path: string;
  branchName: string;
  /** The section (section and comment hits). */
  sectionId: string | null;
  sectionName: string | null;
  /** The comment thread (comment hits). */
  commentId: string | null;
  /** The merge request and its title (merge_request hits). */
  mergeRequestId: string | null;
  title: string | null;
  snippet: SearchSnippetPart[];
  /** Relevance (ts_rank); higher first. */
  rank: number;
}

export interface SearchResult {
  /** Every match you may see, over all pages (of the matches read: see totalIsLowerBound). */
  total: number;
  /** The query matched more than SEARCH_MATCHES_PER_KIND items of a kind: the first ones found were ranked and counted. */
  totalIsLowerBound: boolean;
  hits: SearchHit[];
  nextCursor: string | null;
  /** When the query as typed found nothing: the indexed words searched instead (typo correction); else null. */
  correctedTo: string[] | null;
}

const searchCursor = z.object({ offset: z.number().int().min(0), query: z.string() });

/** One access decision per document and branch, asked of server/access. */
class AccessJudge {
  private readonly rules = new Map<string, Promise<SectionRules | null>>();

  constructor(
    private readonly ctx: ActionContext,
    private readonly documents: ReadonlyMap<string, DocumentRow>,
    private readonly grants: ReadonlyMap<string, Permission>,
  ) {}

  /** The caller's section rules for a document's branch head, or null when the document is not the caller's to read. */
  rulesFor(documentId: string, branchName: string): Promise<SectionRules | null> {
    const key = `${documentId}\u0000${branchName}`;
    let rules = this.rules.get(key);
    if (!rules) {
      rules = (async () => {
        const document = this.documents.get(documentId);
        if (!document || document.workspaceId !== this.ctx.actor.workspaceId) return null;
        const access = accessWithGrant(document, subjectOf(this.ctx.actor), this.grants.get(documentId) ?? null);
        if (access.permission === "none") return null;
        return sectionRules(this.ctx.db, access, branchName);
      })();
      this.rules.set(key, rules);
    }
    return rules;
  }

  async visible(hit: SearchCandidate): Promise<boolean> {
    const rules = await this.rulesFor(hit.documentId, hit.branchName);
    if (!rules) return false;
    if (hit.sectionId === null) return true;
    return rules.permission(hit.sectionId, { defaultPermission: hit.defaultPermission, aiAccess: hit.aiAccess }) !== "none";
  }
}

/**
 * How many matches of `terms` the caller may see (of those read: `capped` when a kind had more), and the judge that
 * decided it (documents and grants loaded once). Each group of matches is one decision of server/access
 * (searchMatchGroups).
 */
async function countVisible(
  ctx: ActionContext,
  terms: SearchTerms,
  filters: SearchFilters,
): Promise<{ total: number; capped: boolean; judge: AccessJudge }> {
  const { groups, capped } = await searchMatchGroups(ctx.db, terms, filters);
  const documentIds = [...new Set(groups.map((g) => g.documentId))];
  const [documents, grants] = await Promise.all([documentsById(ctx.db, documentIds), grantsFor(ctx.db, ctx.actor.userId, documentIds)]);
  const judge = new AccessJudge(ctx, documents, grants);
  const verdicts = await Promise.all(groups.map((g) => judge.visible(g)));
  return { total: groups.reduce((sum, g, i) => sum + (verdicts[i] ? g.count : 0), 0), capped, judge };
}

/** The best `wanted` matches the caller may see, best first: the best matches, fetched in growing batches until enough are visible. */
async function bestVisible(
  ctx: ActionContext,
  terms: SearchTerms,
  filters: SearchFilters,
  judge: AccessJudge,
  wanted: number,
): Promise<SearchCandidate[]> {
  for (let batch = wanted + 10; ; batch *= 4) {
    const candidates = await searchCandidates(ctx.db, terms, filters, batch);
    const verdicts = await Promise.all(candidates.map((c) => judge.visible(c)));
    const visible = candidates.filter((_, i) => verdicts[i]);
    if (visible.length >= wanted || candidates.length < batch) return visible.slice(0, wanted);
  }
}

async function search(ctx: ActionContext, input: SearchInput): Promise<SearchResult> {
  const limit = input.limit ?? DEFAULT_SEARCH_LIMIT;
  const offset = input.cursor ? decodeCursor(input.cursor, searchCursor) : { offset: 0, query: input.query };
  if (offset.query !== input.query) {
    throw new DomainError("VALIDATION_FAILED", "cursor belongs to another query: pass `nextCursor` with the query it came from.", {
      issues: [{ path: "cursor", message: "from another query" }],
    });
  }
  const parsed = parseQuery(input.query);
  const filters: SearchFilters = {
    workspaceId: ctx.actor.workspaceId,
    branchName: input.branchName ?? null,
    pathPrefix: input.pathPrefix?.replace(/^\/+/, "") || null,
    tagId: input.tagId ?? null,
    kinds: input.kind ? [input.kind] : SEARCH_KINDS,
  };

  // The index is brought to the heads as they are now before it is read: a write or merge that returned is found.
  await bringIndexUpToDate(ctx.db);

  // The query as typed; when it finds nothing, its last word as a prefix (a word still being typed); then the closest
  // indexed words (a typo). Each next try only when the one before found nothing, so a common prefix never
  // swamps what the words themselves find.
  let terms: SearchTerms = { kind: "parsed", query: parsed, prefix: false };
  let counted = await countVisible(ctx, terms, filters);
  let correctedTo: string[] | null = null;
  if (counted.total === 0 && parsed.prefix !== null) {
    const prefixed: SearchTerms = { kind: "parsed", query: parsed, prefix: true };
    const recounted = await countVisible(ctx, prefixed, filters);
    if (recounted.total > 0) {
      terms = prefixed;
      counted = recounted;
    }
  }
  if (counted.total === 0 && parsed.words.length > 0) {
    const suggestions = await suggestedLexemes(ctx.db, parsed.words);
    const tsquery = suggestionsQuery(suggestions);
    if (tsquery !== "" && suggestions.every((s) => s.length > 0)) {
      const suggested: SearchTerms = { kind: "suggested", tsquery };
      const recounted = await countVisible(ctx, suggested, filters);
      if (recounted.total > 0) {
        terms = suggested;
        counted = recounted;
        correctedTo = suggestions.map((s) => s[0]!);
      }
    }
  }

  const total = counted.total;
  const page =
    offset.offset < total ? (await bestVisible(ctx, terms, filters, counted.judge, offset.offset + limit)).slice(offset.offset) : [];
  const details = await searchHitDetails(ctx.db, terms, page);
  const hits = page.map(
    (hit, i): SearchHit => ({
      kind: hit.kind,
      documentId: hit.documentId,
      documentName: details[i]!.documentName,
      path: details[i]!.path,
      branchName: hit.branchName,
      sectionId: hit.sectionId,
      sectionName: details[i]!.sectionName,
      commentId: hit.kind === "comment" ? hit.itemId : null,
      mergeRequestId: hit.kind === "merge_request" ? hit.itemId : null,
      title: details[i]!.title,
      snippet: snippetParts(details[i]!.headline),
      rank: Math.round(hit.rank * 1e6) / 1e6,
    }),
  );
  const next = offset.offset + limit;
  return {
    total,
    totalIsLowerBound: counted.capped,
    hits,
    nextCursor: next < total ? encodeCursor({ offset: next, query: input.query }) : null,
    correctedTo,
  };
}

export const searchTool = defineTool({
  name: "search",
  description: [
    "Full-text search over what you may read: document names and paths, section names and text, comment threads, merge requests.",
    "Read a hit's sections with `read` and its sectionIds.",
  ].join(" "),
  input: searchInput,
  readOnly: true,
  handle: search,
});

/** Rebuilds the search index from every branch head (`quire search reindex`): for an index lost or made by an older Quire. */
export function reindexSearch(db: ActionContext["db"]): Promise<{ branches: number; sections: number }> {
  return reindexAll(db);
}
