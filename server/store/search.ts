/**
 * Full-text search reads: the candidates a query matches (ranked, with what
 * access needs to judge each one: its document, branch, section and that
 * section's overrides at the head), and afterwards the snippets and names of
 * the few the caller may see. Which candidates the caller sees is not decided
 * here (server/access does, in actions/search.ts); snippets are made only for
 * what it let through.
 */
import { type SQL, sql } from "drizzle-orm";
import type { Permission } from "@/server/core/document-model";
import { HIGHLIGHT_START, HIGHLIGHT_STOP, type ParsedQuery, suggestionsQuery } from "@/server/core/search-text";
import { documents } from "@/db/schema";
import { anyOf, queryRows, type Tx } from "./db";
import type { DocumentRow } from "./documents";
import { SEARCH_CONFIG } from "./search-index";

/** The configuration as a literal: the expression indexes on comments and merge requests match only this exact expression. */
const CONFIG = sql.raw(`'${SEARCH_CONFIG}'::regconfig`);

export const SEARCH_KINDS = ["document", "section", "comment", "merge_request"] as const;
export type SearchKind = (typeof SEARCH_KINDS)[number];

/** What a query asks for. */
export type SearchTerms =
  | { kind: "parsed"; query: ParsedQuery /** The last word also matches as a prefix. */; prefix: boolean }
  | { kind: "suggested"; tsquery: string };

export interface SearchFilters {
  workspaceId: string;
  /** Null: every document's default branch. */
  branchName: string | null;
  pathPrefix: string | null;
  tagId: string | null;
  kinds: readonly SearchKind[];
}

/** One match before access is applied. */
export interface SearchCandidate {
  kind: SearchKind;
  documentId: string;
  branchName: string;
  /** The section (sections and comments). */
  sectionId: string | null;
  /** The comment or merge request. */
  itemId: string | null;
  rank: number;
  /** The section's overrides at the branch head (sections and comments). */
  defaultPermission: Permission | null;
  aiAccess: Permission | null;
  position: number;
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The tsquery of the terms, as SQL. */
function tsquery(terms: SearchTerms): SQL {
  if (terms.kind === "suggested") return sql`to_tsquery('simple', ${terms.tsquery})`;
  const { websearch, prefix, beforePrefix } = terms.query;
  const whole = sql`websearch_to_tsquery(${CONFIG}, ${websearch})`;
  if (prefix === null || !terms.prefix) return whole;
  // The last word may be unfinished: it also matches as a prefix of a word ("kube" finds "kubernetes").
  return sql`(${whole} || (websearch_to_tsquery(${CONFIG}, ${beforePrefix}) && to_tsquery(${CONFIG}, ${`'${prefix}':*`})))`;
}

/**
 * How many matches of one kind a search reads at most. A query matching more (a common word, or a prefix or typo
 * fallback that widens to tens of thousands of sections) ranks and counts the first this many found, so its cost has
 * a ceiling; its total is then a lower bound (see searchMatchGroups). The plain path, every match read, costs
 * seconds at 100,000 matches (bench/README.md, Search).
 */
export const SEARCH_MATCHES_PER_KIND = 1_000;

/**
 * The matches of the terms under the filters, as one union of a select per kind wanted (null when none is), each
 * select reading at most SEARCH_MATCHES_PER_KIND + 1 matches (the one more tells that there were more).
 */
function matches(terms: SearchTerms, filters: SearchFilters, ranked: boolean): SQL | null {
  const query = tsquery(terms);
  // Counting needs no rank: ts_rank reads every match's whole tsvector.
  const rank = (vector: SQL) => (ranked ? sql`ts_rank(${vector}, ${query})` : sql`0::real`);
  const wanted = (kind: SearchKind) => filters.kinds.includes(kind);
  const onBranch = (alias: string) =>
    filters.branchName === null ? sql`${sql.raw(alias)}.is_default` : sql`${sql.raw(alias)}.branch_name = ${filters.branchName}`;
  // A document deleted on its default branch is found on no branch. On the default branches the head's own deletion
  // (headFilters) says so; on another branch, the document row (which mirrors the default branch) does.
  // Another branch is searched only where it still exists: a deleted branch's rows go at the next full check.
  const documentLive = (alias: string) =>
    filters.branchName === null
      ? sql`true`
      : sql`not (select deleted from documents where id = ${sql.raw(alias)}.document_id)
          and exists (select 1 from branches b where b.document_id = ${sql.raw(alias)}.document_id and b.name = ${sql.raw(alias)}.branch_name)`;
  const headFilters = (alias: string) => {
    const parts: SQL[] = [sql`not ${sql.raw(alias)}.deleted`];
    if (filters.pathPrefix !== null) parts.push(sql`${sql.raw(alias)}.path like ${`${escapeLike(filters.pathPrefix)}%`}`);
    if (filters.tagId !== null) parts.push(sql`${filters.tagId}::uuid = any(${sql.raw(alias)}.tag_ids)`);
    return sql.join(parts, sql` and `);
  };
  const parts: SQL[] = [];
  if (wanted("document")) {
    parts.push(sql`
      select 'document' as kind, h.document_id, h.branch_name, null::uuid as section_id, null::uuid as item_id,
        ${rank(sql`h.search`)} as rank, null::text as default_permission, null::text as ai_access, -1 as position
      from search_heads h
      where h.workspace_id = ${filters.workspaceId} and ${documentLive("h")} and h.search @@ ${query} and ${onBranch("h")} and ${headFilters("h")}`);
  }
  if (wanted("section")) {
    parts.push(sql`
      select 'section' as kind, s.document_id, s.branch_name, s.section_id, null::uuid as item_id,
        ${rank(sql`s.search`)} as rank, s.default_permission, s.ai_access, s.position
      from search_sections s join search_heads h on h.document_id = s.document_id and h.branch_name = s.branch_name
      where s.workspace_id = ${filters.workspaceId} and ${documentLive("s")} and s.search @@ ${query} and ${onBranch("s")} and ${headFilters("h")}`);
  }
  if (wanted("comment")) {
    // A thread matches by its comment or any reply, in the section whose text anchors it at the branch head.
    parts.push(sql`
      select 'comment' as kind, s.document_id, s.branch_name, s.section_id, c.id as item_id,
        ${rank(sql`to_tsvector(${CONFIG}, c.body)`)} + coalesce((
          select max(${rank(sql`to_tsvector(${CONFIG}, r.body)`)}) from comment_replies r where r.comment_id = c.id), 0) as rank,
        s.default_permission, s.ai_access, s.position
      from comments c
        join search_sections s on s.document_id = c.document_id and s.section_id = c.section_id and c.id = any(s.comment_ids)
        join search_heads h on h.document_id = s.document_id and h.branch_name = s.branch_name
      where c.workspace_id = ${filters.workspaceId} and ${documentLive("s")} and ${onBranch("s")} and ${headFilters("h")}
        and c.id in (
          select id from comments where to_tsvector(${CONFIG}, body) @@ ${query}
          union select comment_id from comment_replies where to_tsvector(${CONFIG}, body) @@ ${query})`);
  }
  if (wanted("merge_request")) {
    // A request belongs to its source and target branches; without a branch asked for, every request of the document.
    const branch =
      filters.branchName === null ? sql`true` : sql`(m.source_branch = ${filters.branchName} or m.target_branch = ${filters.branchName})`;
    parts.push(sql`
      select 'merge_request' as kind, m.document_id, m.target_branch as branch_name, null::uuid as section_id, m.id as item_id,
        ${rank(sql`to_tsvector(${CONFIG}, m.title || ' ' || coalesce(m.description, ''))`)} as rank,
        null::text as default_permission, null::text as ai_access, -1 as position
      from merge_requests m join search_heads h on h.document_id = m.document_id and h.is_default
      where m.workspace_id = ${filters.workspaceId} and ${branch} and ${headFilters("h")}
        and to_tsvector(${CONFIG}, m.title || ' ' || coalesce(m.description, '')) @@ ${query}`);
  }
  if (parts.length === 0) return null;
  return sql.join(
    parts.map((part) => sql`(${part} limit ${SEARCH_MATCHES_PER_KIND + 1})`),
    sql` union all `,
  );
}

/**
 * The best `limit` matches of the terms under the filters, best first (ties in kind, document and section order):
 * ranked among the matches read, the first SEARCH_MATCHES_PER_KIND + 1 of each kind.
 */
export async function searchCandidates(tx: Tx, terms: SearchTerms, filters: SearchFilters, limit: number): Promise<SearchCandidate[]> {
  const union = matches(terms, filters, true);
  if (union === null) return [];
  const rows = await queryRows<{
    kind: SearchKind;
    document_id: string;
    branch_name: string;
    section_id: string | null;
    item_id: string | null;
    rank: number;
    default_permission: Permission | null;
    ai_access: Permission | null;
    position: number;
  }>(
    tx,
    sql`select * from (${union}) m
      order by rank desc, array_position(${sql.param([...SEARCH_KINDS])}::text[], kind), document_id, position, item_id
      limit ${limit}`,
  );
  return rows.map((r) => ({
    kind: r.kind,
    documentId: r.document_id,
    branchName: r.branch_name,
    sectionId: r.section_id,
    itemId: r.item_id,
    rank: Number(r.rank),
    defaultPermission: r.default_permission,
    aiAccess: r.ai_access,
    position: Number(r.position),
  }));
}

/** The matches of a search in groups one access decision settles, and whether some kind had more than were read. */
export interface SearchMatchGroups {
  groups: Array<SearchCandidate & { count: number }>;
  /** A kind matched more than SEARCH_MATCHES_PER_KIND: the groups hold the first ones found (a lower bound). */
  capped: boolean;
}

/**
 * The matches of the terms under the filters (up to SEARCH_MATCHES_PER_KIND + 1 of each kind), counted in groups
 * that one access decision settles: on the default branches, the matches of a document whose sections carry no
 * overrides of their own (a section's visibility there is then the document's); every other match on its own (its
 * section's overrides, or another branch, where hiding at the default head is asked per section).
 */
export async function searchMatchGroups(tx: Tx, terms: SearchTerms, filters: SearchFilters): Promise<SearchMatchGroups> {
  const union = matches(terms, filters, false);
  if (union === null) return { groups: [], capped: false };
  const perSection = sql`(${filters.branchName !== null} or default_permission is not null or ai_access is not null)`;
  const rows = await queryRows<{
    kind: SearchKind;
    document_id: string;
    branch_name: string;
    section_id: string | null;
    default_permission: Permission | null;
    ai_access: Permission | null;
    count: number;
  }>(
    tx,
    sql`select kind, document_id, branch_name, case when ${perSection} then section_id end as section_id,
        default_permission, ai_access, count(*)::int as count
      from (${union}) m
      group by 1, 2, 3, 4, 5, 6`,
  );
  const perKind = new Map<SearchKind, number>();
  for (const r of rows) perKind.set(r.kind, (perKind.get(r.kind) ?? 0) + Number(r.count));
  const groups = rows.map((r) => ({
    kind: r.kind,
    documentId: r.document_id,
    branchName: r.branch_name,
    // A group of a document's plain sections is judged as any one of them (their id does not change the answer).
    sectionId: r.section_id ?? (r.kind === "section" || r.kind === "comment" ? ANY_SECTION : null),
    itemId: null,
    rank: 0,
    defaultPermission: r.default_permission,
    aiAccess: r.ai_access,
    position: 0,
    count: Number(r.count),
  }));
  return { groups, capped: [...perKind.values()].some((count) => count > SEARCH_MATCHES_PER_KIND) };
}

/** Stands for any section of a group without overrides on a default branch (see searchMatchGroups). */
const ANY_SECTION = "00000000-0000-0000-0000-000000000000";

/** Lexemes of the index like each word (trigram similarity), best first: what a mistyped query may have meant. */
export async function suggestedLexemes(tx: Tx, words: readonly string[], perWord = 3): Promise<string[][]> {
  return Promise.all(
    words.map(async (word) => {
      const rows = await queryRows<{ word: string }>(
        tx,
        sql`select word from search_words where word % ${word} order by similarity(word, ${word}) desc, word limit ${perWord}`,
      );
      return rows.map((r) => r.word);
    }),
  );
}

export { suggestionsQuery };

/** The documents of the given ids, by id (the rows access is judged on). */
export async function documentsById(tx: Tx, ids: readonly string[]): Promise<Map<string, DocumentRow>> {
  const rows = await tx.select().from(documents).where(anyOf(documents.id, ids));
  return new Map(rows.map((row) => [row.id, row]));
}

/** A hit the caller may see, with what is shown of it. */
export interface SearchHitDetails {
  documentName: string;
  path: string;
  sectionName: string | null;
  title: string | null;
  /** ts_headline's text, words that matched between HIGHLIGHT_START and HIGHLIGHT_STOP. */
  headline: string;
}

const HEADLINE_OPTIONS = `StartSel=${HIGHLIGHT_START}, StopSel=${HIGHLIGHT_STOP}, MaxWords=28, MinWords=10, ShortWord=2, MaxFragments=2, FragmentDelimiter=" … "`;

/** Names, paths and highlighted snippets of the given hits (only those: a snippet is never made of what access left out). */
export async function searchHitDetails(
  tx: Tx,
  terms: SearchTerms,
  hits: ReadonlyArray<Pick<SearchCandidate, "kind" | "documentId" | "branchName" | "sectionId" | "itemId">>,
): Promise<SearchHitDetails[]> {
  if (hits.length === 0) return [];
  const query = tsquery(terms);
  const rows = await queryRows<{
    ordinal: number;
    document_name: string | null;
    path: string | null;
    section_name: string | null;
    title: string | null;
    headline: string | null;
  }>(
    tx,
    sql`
      with q as (select ${query} as query),
      hit as (
        select * from json_to_recordset(${JSON.stringify(hits.map((h, ordinal) => ({ ordinal, kind: h.kind, document_id: h.documentId, branch_name: h.branchName, section_id: h.sectionId, item_id: h.itemId })))}::json)
          as x(ordinal int, kind text, document_id uuid, branch_name text, section_id uuid, item_id uuid)
      )
      select hit.ordinal, h.name as document_name, h.path, s.name as section_name, m.title,
        case hit.kind
          when 'document' then ts_headline(${CONFIG}, h.name || ' · ' || h.path || coalesce(' · ' || h.description, ''), q.query, ${HEADLINE_OPTIONS})
          when 'section' then ts_headline(${CONFIG}, s.name || ' · ' || s.body, q.query, ${HEADLINE_OPTIONS})
          when 'comment' then ts_headline(${CONFIG}, c.body || coalesce((
            select ' · ' || string_agg(r.body, ' · ' order by r.created_at) from comment_replies r where r.comment_id = c.id), ''), q.query, ${HEADLINE_OPTIONS})
          else ts_headline(${CONFIG}, m.title || coalesce(' · ' || m.description, ''), q.query, ${HEADLINE_OPTIONS})
        end as headline
      from hit cross join q
        left join search_heads h on h.document_id = hit.document_id
          and case when hit.kind = 'merge_request' then h.is_default else h.branch_name = hit.branch_name end
        left join search_sections s on s.document_id = hit.document_id and s.branch_name = hit.branch_name and s.section_id = hit.section_id
        left join comments c on hit.kind = 'comment' and c.id = hit.item_id
        left join merge_requests m on hit.kind = 'merge_request' and m.id = hit.item_id`,
  );
  const byOrdinal = new Map(rows.map((r) => [Number(r.ordinal), r]));
  return hits.map((_, ordinal) => {
    const row = byOrdinal.get(ordinal);
    return {
      documentName: row?.document_name ?? "",
      path: row?.path ?? "",
      sectionName: row?.section_name ?? null,
      title: row?.title ?? null,
      headline: row?.headline ?? "",
    };
  });
}
